import assert from "node:assert/strict";
import { test } from "node:test";
import { ServerNotFound, findServer, type Probe, type Where } from "../src/discovery";

/** A machine with these files: path → what `--version` prints (an Error: it fails to run). */
function machine(files: Record<string, string | Error>) {
  const madeExecutable: string[] = [];
  const probe: Probe = {
    isFile: async (f) => f in files,
    makeExecutable: async (f) => void madeExecutable.push(f),
    version: async (f) => {
      const v = files[f];
      if (v instanceof Error) throw v;
      return v;
    },
  };
  return { probe, madeExecutable };
}

const where = (over: Partial<Where> = {}): Where => ({
  setting: "",
  bundled: "/ext/server/bloatlens-lsp",
  pathEnv: "/usr/local/bin:/opt/bl/bin",
  home: "/home/dev",
  ...over,
});

test("the setting wins over the bundled binary and PATH, with ~ expanded", async () => {
  const { probe } = machine({
    "/home/dev/bl/bloatlens-lsp": "bloatlens-lsp 0.2.0\n",
    "/ext/server/bloatlens-lsp": "bloatlens-lsp 0.1.0\n",
  });
  const found = await findServer(where({ setting: "~/bl/bloatlens-lsp" }), probe);
  assert.deepEqual(found, { path: "/home/dev/bl/bloatlens-lsp", version: "0.2.0", source: "setting" });
});

test("a setting naming a missing file is an error, not a silent fallback", async () => {
  const { probe } = machine({ "/ext/server/bloatlens-lsp": "bloatlens-lsp 0.1.0" });
  await assert.rejects(findServer(where({ setting: "/nope/bloatlens-lsp" }), probe), (e: Error) => {
    assert.ok(e instanceof ServerNotFound);
    assert.match(e.message, /bloatlens\.server\.path is "\/nope\/bloatlens-lsp", but there is no file/);
    return true;
  });
});

test("the bundled binary is used next, and made executable", async () => {
  const { probe, madeExecutable } = machine({
    "/ext/server/bloatlens-lsp": "bloatlens-lsp 0.1.0",
    "/usr/local/bin/bloatlens-lsp": "bloatlens-lsp 9.9.9",
  });
  const found = await findServer(where(), probe);
  assert.equal(found.source, "bundled");
  assert.equal(found.version, "0.1.0");
  assert.deepEqual(madeExecutable, ["/ext/server/bloatlens-lsp"]);
});

test("a bundled binary that does not run falls back to PATH, in PATH's order", async () => {
  const { probe } = machine({
    "/ext/server/bloatlens-lsp": new Error("cannot execute binary file: Exec format error"),
    "/opt/bl/bin/bloatlens-lsp": "bloatlens-lsp 0.1.5",
  });
  assert.deepEqual(await findServer(where(), probe), { path: "/opt/bl/bin/bloatlens-lsp", version: "0.1.5", source: "PATH" });
});

test("nothing found: the error says what was tried and how to fix it", async () => {
  const { probe } = machine({ "/ext/server/bloatlens-lsp": new Error("Exec format error") });
  await assert.rejects(findServer(where(), probe), (e: Error) => {
    assert.match(e.message, /the bundled server \(\/ext\/server\/bloatlens-lsp\) does not run: Exec format error/);
    assert.match(e.message, /no bloatlens-lsp on PATH/);
    assert.match(e.message, /set bloatlens\.server\.path/);
    return true;
  });
});

test("a binary that is not a Bloatlens server is refused by its --version", async () => {
  const { probe } = machine({ "/usr/local/bin/bloatlens-lsp": "rust-analyzer 1.0" });
  await assert.rejects(findServer(where({ bundled: "/none" }), probe), /is not a Bloatlens server: --version printed "rust-analyzer 1.0"/);
});
