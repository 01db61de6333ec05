import assert from "node:assert/strict";
import { test } from "node:test";
import { StatusBar, describe } from "../src/status";
import { items } from "./vscode-stub";

test("each state reads as what a developer needs to know", () => {
  assert.equal(describe({ kind: "starting" }).text, "$(loading~spin) Bloatlens");
  const running = describe({ kind: "server", status: { state: "running", mainClass: "app.Main", findings: 3, stale: 0 } });
  assert.equal(running.text, "$(loading~spin) Bloatlens: profiling app.Main");
  assert.match(running.tooltip, /the 3 findings shown are from the last run/);
  assert.equal(
    describe({ kind: "server", status: { state: "running", mainClass: "app.Main", findings: 0, stale: 0 } }, 4200).text,
    "$(loading~spin) Bloatlens: profiling app.Main · 4 s",
  );
  const done = describe({ kind: "server", status: { state: "done", mainClass: "app.Main", findings: 7, stale: 0, millis: 1234 } });
  assert.equal(done.text, "$(pulse) Bloatlens: 7 findings · 1.2 s");
  assert.ok(!done.warning && !done.error);
  const tested = describe({
    kind: "server",
    status: { state: "done", mainClass: "app.FooTest", tests: "1 passed, 1 failed", findings: 2, stale: 0, millis: 2000 },
  });
  assert.equal(tested.text, "$(pulse) Bloatlens: 2 findings · 2.0 s · tests: 1 passed, 1 failed");
  assert.match(tested.tooltip, /profiled app\.FooTest in 2\.0 s \(tests: 1 passed, 1 failed\)/);
  const fixed = describe({
    kind: "server",
    status: {
      state: "done",
      mainClass: "Main",
      findings: 3,
      stale: 0,
      millis: 900,
      fixSaved: "−23% instructions, −1.2 MB allocated since the fix; the finding is gone",
    },
  });
  assert.equal(fixed.text, "$(pulse) Bloatlens: 3 findings · 900 ms · fix: −23% instructions, −1.2 MB allocated");
  assert.match(fixed.tooltip, /the quick fix applied before this run: −23% instructions.*the finding is gone/);
  const stale = describe({ kind: "server", status: { state: "done", findings: 1, stale: 1, millis: 80 } });
  assert.equal(stale.text, "$(pulse) Bloatlens: 1 finding (1 stale) · 80 ms");
  assert.ok(stale.warning);
  const failed = describe({ kind: "server", status: { state: "failed", message: "compile errors", findings: 0, stale: 0 } });
  assert.ok(failed.error);
  assert.equal(failed.tooltip, "Bloatlens: compile errors");
  assert.ok(describe({ kind: "stopped", reason: "no language server" }).error);
});

test("the item counts finished runs and shows the latest state", () => {
  const bar = new StatusBar();
  const item = items[items.length - 1];
  assert.equal(item.text, "$(loading~spin) Bloatlens");
  assert.equal(item.command, "bloatlens.profileCurrentMain");
  const run = (findings: number) => {
    bar.show({ kind: "server", status: { state: "running", mainClass: "Main", findings: 0, stale: 0 } });
    bar.show({ kind: "server", status: { state: "done", mainClass: "Main", findings, stale: 0, millis: 900 } });
  };
  run(2);
  // A finding going stale is not a new run.
  bar.show({ kind: "server", status: { state: "done", mainClass: "Main", findings: 2, stale: 1, millis: 900 } });
  assert.equal(bar.runs, 1);
  assert.ok(item.backgroundColor, "stale findings colour the item");
  run(3);
  assert.equal(bar.runs, 2);
  assert.equal(item.text, "$(pulse) Bloatlens: 3 findings · 900 ms");
  assert.equal(item.backgroundColor, undefined);
  bar.dispose();
});

test("a running profile counts its seconds, and stops counting when it ends", async (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "Date"] });
  const bar = new StatusBar();
  const item = items[items.length - 1];
  bar.show({ kind: "server", status: { state: "running", mainClass: "Main", findings: 0, stale: 0 } });
  t.mock.timers.tick(3000);
  assert.equal(item.text, "$(loading~spin) Bloatlens: profiling Main · 3 s");
  bar.show({ kind: "server", status: { state: "done", mainClass: "Main", findings: 1, stale: 0, millis: 3100 } });
  t.mock.timers.tick(5000);
  assert.equal(item.text, "$(pulse) Bloatlens: 1 finding · 3.1 s");
  bar.dispose();
});

test("a newer run restarts the clock; choosing and cancelling say so", async (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "Date"] });
  const bar = new StatusBar();
  const item = items[items.length - 1];
  bar.show({ kind: "server", status: { state: "compiling", mainClass: "Main", run: 1, findings: 0, stale: 0 } });
  t.mock.timers.tick(2000);
  bar.show({ kind: "server", status: { state: "running", mainClass: "Main", run: 1, findings: 0, stale: 0 } });
  t.mock.timers.tick(2000);
  assert.equal(item.text, "$(loading~spin) Bloatlens: profiling Main · 4 s", "compiling and running are one run");
  // A save during the run starts run 2: its clock starts at 0.
  bar.show({ kind: "server", status: { state: "compiling", mainClass: "Main", run: 2, findings: 0, stale: 0 } });
  t.mock.timers.tick(1000);
  assert.equal(item.text, "$(loading~spin) Bloatlens: compiling Main · 1 s");
  bar.show({ kind: "server", status: { state: "cancelled", mainClass: "Main", findings: 2, stale: 0 } });
  assert.equal(item.text, "$(circle-slash) Bloatlens: cancelled · 2 findings from the last run");
  bar.show({ kind: "server", status: { state: "choose", mains: ["A", "B"], findings: 0, stale: 0 } });
  assert.equal(item.text, "$(list-selection) Bloatlens: choose an entry point");
  assert.equal(item.command, "bloatlens.profileEntryPoint", "a click offers the mains");
  assert.match(String(describe(bar.current).tooltip), /2 classes have a main method \(A, B\)/);
  bar.dispose();
});

test("an untrusted workspace says Restricted Mode and the item opens Workspace Trust", () => {
  const look = describe({ kind: "server", status: { state: "restricted", findings: 0, stale: 0 } });
  assert.equal(look.text, "$(shield) Bloatlens: Restricted Mode");
  assert.match(look.tooltip, /not trusted/);
  assert.match(look.tooltip, /manage Workspace Trust/);
  const bar = new StatusBar();
  const item = items[items.length - 1];
  bar.show({ kind: "server", status: { state: "restricted", findings: 0, stale: 0 } });
  assert.equal(item.command, "workbench.trust.manage");
  bar.show({ kind: "server", status: { state: "idle", findings: 0, stale: 0 } });
  assert.equal(item.command, "bloatlens.profileCurrentMain");
  bar.dispose();
});
