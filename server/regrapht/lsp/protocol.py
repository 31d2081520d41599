"""pygls protocol and server classes with two fixes the server relies on.

1. Position encoding: pygls takes the client's first supported encoding (possibly UTF-8). We
   want UTF-32 when offered (engine columns are code points) and otherwise UTF-16, so the
   client's offer is narrowed to that one choice before pygls negotiates.
2. Malformed requests: when a request's params do not match the LSP schema, pygls logs the
   failure but never answers, leaving the client waiting forever. Here such a request gets an
   InvalidParams error response and the server keeps serving.
3. Messages that are not JSON-RPC at all: pygls logs a traceback and answers nothing. Per the
   JSON-RPC 2.0 spec, a body that is not valid JSON gets a Parse error (-32700) and one that is
   JSON but not a message an Invalid Request (-32600), both with id null; the server goes on.
4. A `didChange` for a document that is not open: pygls raises KeyError (sent to the client as
   an error message); here it is one warning in the log.
5. A client's `null` answer to a request whose result LSP types as an object (workspace/applyEdit):
   pygls fails to read it and never resolves the request; here the awaiting handler gets None.
   And an InvalidParams (-32602) answer is logged as one line, without a traceback.

Protocol-level errors are logged (stderr + window/logMessage), not shown as popups.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import cattrs
from lsprotocol import types
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from regrapht.lsp.converters import negotiate_encoding

log = logging.getLogger(__name__)


@dataclass
class UnidentifiedErrorResponse:
    """An error response to a message whose id could not be read (serialised with `"id": null`)."""

    error: Any
    id: None = None
    jsonrpc: str = "2.0"


@dataclass
class MalformedRequest:
    """Stands in for a request whose params failed to deserialize."""

    id: int | str
    method: str
    reason: str
    jsonrpc: str = "2.0"


class RegraphtProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [negotiate_encoding(general.position_encodings)]
        result = yield from super().lsp_initialize(params)
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        """A change of a document the client never opened is logged and dropped (pygls' own sync
        would raise KeyError and tell the client so); an open one goes through pygls as before."""
        uri = params.text_document.uri
        if uri not in self.workspace.text_documents and unquote(uri) not in self.workspace.text_documents:
            log.warning("didChange for a document that is not open: %s", uri)
            return
        yield from super().lsp_text_document__did_change(params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        if data.get("jsonrpc") and "id" in data and "method" not in data and "error" not in data \
                and data.get("result") is None:
            # a client that answers a request with `null` where LSP wants an object (an
            # ApplyWorkspaceEditResult): the awaiting handler gets None instead of never completing
            return self._converter.structure(data, JsonRPCResponseMessage)
        if data.get("jsonrpc") and "id" in data and isinstance(data.get("method"), str):
            request_type = self.get_message_type(data["method"])
            if request_type is not None:
                try:
                    return self._converter.structure(data, request_type)
                except (cattrs.BaseValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
                    reason = _describe(exc)
                    log.warning("malformed %s request %s: %s", data["method"], data["id"], reason)
                    return MalformedRequest(data["id"], data["method"], reason)
        return super().structure_message(data)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, MalformedRequest):
            error = JsonRpcInvalidParams(f"invalid params for {message.method}: {message.reason}")
            self._send_response(message.id, None, error.to_response_error())
            return
        if getattr(message, "jsonrpc", None) is None:
            # valid JSON, but no JSON-RPC message (a number, a list, an object without "jsonrpc")
            log.warning("invalid JSON-RPC message: %.200r", message)
            self.answer_unusable_message(JsonRpcInvalidRequest(f"not a JSON-RPC 2.0 message: {message!r:.100}"))
            return
        super().handle_message(message)

    def answer_unusable_message(self, error: JsonRpcException) -> None:
        """The error response with id null that JSON-RPC prescribes when no id can be read."""
        self._send_data(UnidentifiedErrorResponse(error=error.to_response_error()))


def _describe(exc: Exception) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        notes = cattrs.transform_error(exc)
        return "; ".join(notes) if notes else str(exc)
    return str(exc) or type(exc).__name__


class RegraphtServer(LanguageServer):
    """pygls server that logs protocol errors instead of raising popups for them."""

    def report_server_error(self, error: Exception, source: Any) -> None:
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            # pygls' reader could not parse a message body: answer it, the connection goes on
            log.warning("unparseable JSON-RPC message: %s", error)
            protocol = self.protocol
            assert isinstance(protocol, RegraphtProtocol)
            protocol.answer_unusable_message(JsonRpcParseError(f"Parse error: {error}"))
            return
        if source is FeatureRequestError:
            # The client already received this as the request's error response.
            log.info("request failed: %s", error)
            return
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)
        self.window_log_message(
            types.LogMessageParams(type=types.MessageType.Error, message=f"regrapht: {error}")
        )


class QuietParseErrors(logging.Filter):
    """Drops the traceback pygls' reader logs with a message it cannot parse: the client gets a
    Parse error response, and the log a one-line warning (from `report_server_error`). A request
    refused as invalid params (-32602: bad input the client is told about) is logged as one line,
    without its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, JsonRpcInvalidParams):
            record.msg = f"{record.getMessage()}: invalid params: {error}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
            return True
        return not isinstance(error, json.JSONDecodeError | UnicodeDecodeError)
