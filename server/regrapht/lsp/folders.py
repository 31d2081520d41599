"""Workspace folders and the settings pulled for each one (no pygls; `ServerState` holds one).

A document's settings are its workspace folder's: the folder whose URI is the longest prefix of
the document's at a path boundary (nested folders: the inner one). The server asks the client
for the `regrapht` section once per folder (`workspace/configuration` with the folder as
`scopeUri`, features/configuration.py) and keeps the answers here; a document outside every
folder, or in a folder whose answer was null, takes the window's settings. Of a folder's
answer only the `settings.FOLDER_SCOPED` keys it gives are used (`settings.in_folder`): the
rest belong to the window.

Immutable: the server installs a new `FolderSettings` on the loop, and worker threads read one
consistent object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from regrapht.settings import FOLDER_SCOPED, Settings, in_folder


def _normal(uri: str) -> str:
    """A URI as it is compared: percent-decoded (clients differ on `%3A` for a drive's colon),
    without a trailing slash."""
    return unquote(uri).rstrip("/")


def contains(folder: str, uri: str) -> bool:
    """Is `uri` the folder itself or inside it (at a path boundary: `/w/a` does not hold `/w/ab`)?"""
    base, target = _normal(folder), _normal(uri)
    return target == base or target.startswith(base + "/")


def folder_of(uri: str, folders: Iterable[str]) -> str | None:
    """The folder (as given) that holds `uri`, the longest where folders nest; None outside all."""
    holding = [folder for folder in folders if contains(folder, uri)]
    return max(holding, key=lambda folder: len(_normal(folder)), default=None)


def folders_after(current: Sequence[str], added: Iterable[str], removed: Iterable[str]) -> tuple[str, ...]:
    """The folders after a `workspace/didChangeWorkspaceFolders` event, in order, each once."""
    gone = {_normal(uri) for uri in removed}
    kept: list[str] = []
    seen: set[str] = set()
    for uri in (*current, *added):
        key = _normal(uri)
        if key not in gone and key not in seen:
            seen.add(key)
            kept.append(uri)
    return tuple(kept)


@dataclass(frozen=True)
class FolderAnswer:
    """A folder's parsed answer and the fields it gave (`settings.given_fields`): the window's
    value stands for the others."""

    settings: Settings
    given: frozenset[str] = frozenset(FOLDER_SCOPED)


@dataclass(frozen=True)
class FolderSettings:
    """The workspace folders and, by folder URI, the answer pulled for it."""

    folders: tuple[str, ...] = ()
    pulled: Mapping[str, FolderAnswer] = field(default_factory=dict)

    def folder_of(self, uri: str) -> str | None:
        return folder_of(uri, self.folders)

    def for_uri(self, uri: str, window: Settings) -> Settings:
        """The settings of the document `uri`: its folder's where pulled, else the window's."""
        folder = self.folder_of(uri)
        own = self.pulled.get(folder) if folder is not None else None
        return window if own is None else in_folder(window, own.settings, own.given)

    def with_folders(self, folders: Sequence[str]) -> FolderSettings:
        """Now these folders: the settings of the removed ones are dropped, new ones have none
        until pulled."""
        kept = tuple(folders)
        return FolderSettings(kept, {uri: s for uri, s in self.pulled.items() if uri in kept})

    def with_pulled(self, answers: Mapping[str, FolderAnswer | None]) -> FolderSettings:
        """Pulled `answers` installed (None: the client had none, the window's apply); answers for
        folders no longer in the workspace are dropped (removed while the pull was in flight)."""
        pulled = dict(self.pulled)
        for uri, answer in answers.items():
            if uri not in self.folders:
                continue
            if answer is None:
                pulled.pop(uri, None)
            else:
                pulled[uri] = answer
        return FolderSettings(self.folders, pulled)
