"""The reasoning graph engine: CUDA optimization techniques and observed transitions.

- `types`: Step/Trajectory (input), Example (on edges), EdgeStats, GraphSummary, START.
- `graph.ReasoningGraph`: the networkx DiGraph with examples, prior stats and the overlay.
- `build`: trajectories (JSON Lines) -> graph, following the paper's merge walk.
- `canon`: technique names -> canonical vertex names (synonyms, optional model relabel).
- `store`: msgpack / JSON files, the bundled graph (`load_bundled_graph`), `open_graph`.
- `overlay`: this machine's search statistics in their own file (atomic saves).
- `dot`: Graphviz export.
"""

from regrapht.graph.build import add_trajectory, build_graph, read_trajectories
from regrapht.graph.canon import SYNONYMS, Canonicaliser, normalise
from regrapht.graph.graph import ReasoningGraph
from regrapht.graph.overlay import Overlay, default_overlay_path, load_overlay, merge_into_file, save_overlay
from regrapht.graph.store import load_bundled_graph, load_graph, open_graph, save_graph
from regrapht.graph.types import START, EdgeStats, Example, GraphSummary, Step, Trajectory

__all__ = [
    "START",
    "SYNONYMS",
    "Canonicaliser",
    "EdgeStats",
    "Example",
    "GraphSummary",
    "Overlay",
    "ReasoningGraph",
    "Step",
    "Trajectory",
    "add_trajectory",
    "build_graph",
    "default_overlay_path",
    "load_bundled_graph",
    "load_graph",
    "load_overlay",
    "merge_into_file",
    "normalise",
    "open_graph",
    "read_trajectories",
    "save_graph",
    "save_overlay",
]
