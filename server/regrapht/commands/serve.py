"""`regrapht serve`: the language server over stdio (what editors start)."""

from __future__ import annotations

import argparse
import gc
import logging


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="run the language server over stdio")
    parser.add_argument("--stdio", action="store_true", help="accepted and ignored (stdio is the only transport)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Start-up allocates only objects that live as long as the server (some 570 LSP classes, the
    # converter, the features): collections during it free nothing but rescan the growing heap,
    # on the path to the editor's "ready". None run until the server is built and frozen.
    gc.disable()
    try:
        from regrapht.lsp.protocol import QuietParseErrors
        from regrapht.lsp.server import create_server  # pygls is imported only when serving

        logging.getLogger("regrapht").setLevel(logging.INFO)
        quiet = QuietParseErrors()
        logging.getLogger("pygls.server").addFilter(quiet)
        logging.getLogger("pygls.protocol.json_rpc").addFilter(quiet)  # -32602 answers: one line each
        server, _state = create_server()
        # A server holds large, long-lived immutable models: full collections rescanning them cost
        # ~50 ms each (the p95 of diagnostics latency, bench/lsp_latency.py). Freeze what startup
        # allocated and collect the old generation less often.
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
    finally:
        gc.enable()
    server.start_io()
    return 0
