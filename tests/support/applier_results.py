"""One JSON line per rewrite the GPU applier tests check: printed, and appended to the file
REGRAPHT_APPLIER_RESULTS names when it is set (what a lead reads after a device run)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping


def report_result(line: Mapping[str, object]) -> None:
    text = json.dumps(line)
    print(text)
    path = os.environ.get("REGRAPHT_APPLIER_RESULTS")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text + "\n")
