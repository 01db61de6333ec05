-- Drives a real Neovim against bloatlens-lsp: open a Java file, save it, wait for the findings,
-- ask for a hover and the code lenses, run "next hop", and write what it saw to a JSON file.
-- Arguments come from the environment: BLOATLENS_SERVER, BLOATLENS_ROOT, BLOATLENS_FILE, BLOATLENS_OUT.
local server, root, file, out = os.getenv('BLOATLENS_SERVER'), os.getenv('BLOATLENS_ROOT'),
  os.getenv('BLOATLENS_FILE'), os.getenv('BLOATLENS_OUT')
local seen = { errors = {} }
local function finish()
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(seen))
  f:close()
  vim.cmd('qa!')
end
local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start({ name = 'bloatlens', cmd = { server }, root_dir = root })
  assert(client_id, 'the server did not start')
  assert(vim.wait(20000, function() return vim.lsp.get_client_by_id(client_id).initialized end, 50), 'no initialize')
  vim.cmd('write')
  assert(vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 100), 'no diagnostics after the save')
  seen.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(seen.diagnostics, { line = d.lnum, col = d.col, code = d.code, source = d.source, message = d.message })
  end
  local uri = vim.uri_from_bufnr(buf)
  local chain
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == 'defensive-copy-per-call' then chain = d end
  end
  assert(chain, 'no copy-chain diagnostic (pattern defensive-copy-per-call)')
  local pos = { line = chain.lnum, character = chain.col }
  local hover = vim.lsp.buf_request_sync(buf, 'textDocument/hover', { textDocument = { uri = uri }, position = pos }, 10000)
  for _, r in pairs(hover or {}) do
    if r.result then seen.hover = r.result.contents.value end
  end
  local lenses = vim.lsp.buf_request_sync(buf, 'textDocument/codeLens', { textDocument = { uri = uri } }, 10000)
  seen.lenses = {}
  for _, r in pairs(lenses or {}) do
    for _, l in ipairs(r.result or {}) do table.insert(seen.lenses, l.command.title) end
  end
  vim.api.nvim_win_set_cursor(0, { chain.lnum + 1, chain.col })
  local before = vim.api.nvim_win_get_cursor(0)[1]
  vim.lsp.buf_request_sync(buf, 'workspace/executeCommand',
    { command = 'bloatlens.nextHop', arguments = { uri, pos } }, 10000)
  vim.wait(5000, function() return vim.api.nvim_win_get_cursor(0)[1] ~= before end, 50)
  seen.cursor_after_next_hop = vim.api.nvim_win_get_cursor(0)
end)
if not ok then table.insert(seen.errors, tostring(err)) end
finish()
