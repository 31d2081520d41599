"""`DocumentSnapshot`: one open document as it was at one version, handed to background work.

The editor's handlers take a snapshot on the event loop (or under the document's edit lock) and
give it to a worker thread - a search, a validation, a confirmation - instead of the live
server state: the worker reads only frozen data, and its result carries the snapshot's
`version` and `open_id`, so the handler drops it when the document changed or was reopened
meanwhile (`ServerState.is_current`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from regrapht.settings import Settings


@dataclass(frozen=True)
class DocumentSnapshot:
    uri: str
    version: int
    open_id: int  # which opening of the uri (a close and reopen starts a new one)
    text: str
    path: Path | None  # the file on disk (its folder is the include dir); None: untitled
    settings: Settings  # the settings in force when the snapshot was taken
