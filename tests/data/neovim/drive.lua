-- Headless Neovim (0.7+) as a second, independent LSP client: open a .cu file, wait for
-- diagnostics, hover the kernel name, write what it saw as JSON to $RG_OUT.
local python = os.getenv("RG_PYTHON")
local file = os.getenv("RG_FILE")
local out = os.getenv("RG_OUT")
local report = { diagnostics = {}, hover = nil, error = nil }

local function finish()
  vim.fn.writefile({ vim.fn.json_encode(report) }, out)
  vim.cmd("qa!")
end

vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "regrapht",
  cmd = { python, "-m", "regrapht", "serve", "--stdio" },
  root_dir = vim.fn.fnamemodify(file, ":h"),
  init_options = { settings = { debounceMs = 10 } },
})
if not client_id then
  report.error = "start_client failed"
  finish()
  return
end
vim.lsp.buf_attach_client(buf, client_id)

local ready = vim.wait(20000, function()
  local client = vim.lsp.get_client_by_id(client_id)
  return client ~= nil and client.initialized == true
end, 50)
if not ready then
  report.error = "server did not initialize"
  finish()
  return
end

vim.wait(10000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(report.diagnostics, { code = d.code, message = d.message, lnum = d.lnum, source = d.source })
end

-- the cursor on the kernel name `scale` (line 6, 1-based; column 0-based)
local line = vim.api.nvim_buf_get_lines(buf, 5, 6, false)[1]
local col = string.find(line, "scale", 1, true) - 1
vim.api.nvim_win_set_cursor(0, { 6, col + 1 })
local params = vim.lsp.util.make_position_params()
local responses = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 10000)
for _, response in pairs(responses or {}) do
  if response.error then
    report.error = vim.inspect(response.error)
  elseif response.result then
    report.hover = response.result.contents.value or response.result.contents
  end
end
vim.lsp.stop_client(client_id)
finish()
