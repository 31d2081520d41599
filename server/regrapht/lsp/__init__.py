"""The LSP layer: the pygls server, its protocol fixes, the conversions between engine types and
lsprotocol types, the server state and one module per editor feature (`features/`). Nothing
below this package imports it (tests/unit/app/test_layers.py)."""
