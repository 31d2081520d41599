"""LSP features, one module each; `regrapht.lsp.server` registers them."""
