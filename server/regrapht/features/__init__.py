"""LSP features, one module each; `regrapht.server` registers them."""
