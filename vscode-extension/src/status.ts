// The status-bar item: what the profile is doing. The server says it with `bloatlens/status`
// notifications (running, done with N findings in T, failed, how many findings went stale since);
// the client adds its own states (starting, stopped). `describe` is pure, for tests.

import * as vscode from "vscode";

/** The `bloatlens/status` notification's payload. */
export interface ServerStatus {
  state: "idle" | "choose" | "compiling" | "running" | "done" | "cancelled" | "failed" | "restricted";
  mainClass?: string;
  /** The entry point as the server takes it back in `entryPoint`: a main class, `test:` and a selector, `launch:` and a launch configuration's name. */
  entryPoint?: string;
  /** After a test run: `2 passed, 1 failed`. */
  tests?: string;
  /** After the run that followed a quick fix: what the fix saved ("−23% instructions, −1.2 MB allocated since the fix; …"). */
  fixSaved?: string;
  /** The run's number: a newer save starts a new one (the timer starts again). */
  run?: number;
  /** With `choose`: the classes with a main. */
  mains?: string[];
  findings: number;
  stale: number;
  millis?: number;
  message?: string;
}

export type ClientStatus =
  | { kind: "starting" }
  | { kind: "stopped"; reason: string }
  | { kind: "server"; status: ServerStatus };

export interface Look {
  text: string;
  tooltip: string;
  /** Show it as an error (red background). */
  error: boolean;
  /** Show it as a warning (findings went stale). */
  warning: boolean;
}

export function duration(millis: number): string {
  return millis < 1000 ? `${millis} ms` : `${(millis / 1000).toFixed(1)} s`;
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

/** `elapsed`: how long the running profile has been going, in milliseconds. */
export function describe(s: ClientStatus, elapsed?: number): Look {
  const look = (text: string, tooltip: string, error = false, warning = false) => ({ text, tooltip, error, warning });
  switch (s.kind) {
    case "starting":
      return look("$(loading~spin) Bloatlens", "Bloatlens: starting the server");
    case "stopped":
      return look("$(error) Bloatlens", `Bloatlens is not running: ${s.reason}`, true);
    case "server": {
      const st = s.status;
      const stale = st.stale > 0 ? ` (${st.stale} stale)` : "";
      switch (st.state) {
        case "idle":
          return st.findings > 0
            ? look(`$(pulse) Bloatlens: ${plural(st.findings, "finding")}${stale}`, "Bloatlens: the last profile's findings")
            : look("$(pulse) Bloatlens", "Bloatlens: save a Java file (or run Profile Current Main) to profile");
        case "choose":
          return look(
            "$(list-selection) Bloatlens: choose an entry point",
            `Bloatlens: ${st.mains?.length ?? 0} classes have a main method (${(st.mains ?? []).join(", ")}); ` +
              "click to choose the one to profile",
            false,
            true,
          );
        case "compiling":
        case "running": {
          const verb = st.state === "compiling" ? "compiling" : "profiling";
          return look(
            `$(loading~spin) Bloatlens: ${verb} ${st.mainClass ?? ""}`.trimEnd() +
              (elapsed !== undefined && elapsed >= 1000 ? ` · ${Math.floor(elapsed / 1000)} s` : ""),
            `Bloatlens: ${verb} ${st.mainClass ?? "the program"}` +
              (st.findings > 0 ? `; the ${plural(st.findings, "finding")} shown are from the last run` : ""),
          );
        }
        case "cancelled":
          return look(
            `$(circle-slash) Bloatlens: cancelled${st.findings > 0 ? ` · ${plural(st.findings, "finding")} from the last run` : ""}`,
            `Bloatlens: the profile of ${st.mainClass ?? "the program"} was cancelled` +
              (st.findings > 0 ? `; the ${plural(st.findings, "finding")} shown are from the last complete run` : ""),
            false,
            true,
          );
        case "done": {
          const when = st.millis !== undefined ? ` · ${duration(st.millis)}` : "";
          const tests = st.tests ? ` · tests: ${st.tests}` : "";
          const fixSaved = st.fixSaved ? ` · fix: ${st.fixSaved.split(" since the fix")[0]}` : "";
          return look(
            `$(pulse) Bloatlens: ${plural(st.findings, "finding")}${stale}${when}${tests}${fixSaved}`,
            `Bloatlens: profiled ${st.mainClass ?? "the program"}` +
              (st.millis !== undefined ? ` in ${duration(st.millis)}` : "") +
              (st.tests ? ` (tests: ${st.tests})` : "") +
              `: ${plural(st.findings, "finding")}` +
              (st.stale > 0 ? `, ${st.stale} on lines edited since (stale until the next save)` : "") +
              (st.fixSaved ? `; the quick fix applied before this run: ${st.fixSaved}` : ""),
            false,
            st.stale > 0,
          );
        }
        case "failed":
          return look("$(error) Bloatlens: failed", `Bloatlens: ${st.message ?? "the profile failed"}`, true);
        case "restricted":
          return look(
            "$(shield) Bloatlens: Restricted Mode",
            "Bloatlens: this workspace is not trusted, so Bloatlens compiles and runs nothing in it (no javac, no Maven, " +
              "no program). Click to manage Workspace Trust; trusting the workspace starts profiling.",
            false,
            true,
          );
      }
    }
  }
}

/** The item itself; clicking it profiles the current main. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("bloatlens.status", vscode.StatusBarAlignment.Left, 10);
  /** The last status, and how many runs finished since the extension started (for tests). */
  current: ClientStatus = { kind: "starting" };
  runs = 0;
  /** While a profile runs, the item counts its seconds. */
  private ticker: ReturnType<typeof setInterval> | undefined;
  private runningSince = 0;

  constructor() {
    this.item.name = "Bloatlens";
    this.item.command = "bloatlens.profileCurrentMain";
    this.show({ kind: "starting" });
  }

  show(s: ClientStatus): void {
    if (s.kind === "server" && s.status.state === "done" && !(this.current.kind === "server" && this.current.status.state === "done")) {
      this.runs += 1;
    }
    const runOf = (c: ClientStatus) =>
      c.kind === "server" && (c.status.state === "running" || c.status.state === "compiling") ? (c.status.run ?? 0) : undefined;
    const run = runOf(s);
    if (run !== undefined && run !== runOf(this.current)) {
      // A new run (a newer save replaced the last one): its own clock.
      this.runningSince = Date.now();
      this.ticker ??= setInterval(() => this.render(), 1000);
    } else if (run === undefined && this.ticker !== undefined) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    this.current = s;
    this.render();
  }

  private render(): void {
    const s = this.current;
    const look = describe(s, this.ticker !== undefined ? Date.now() - this.runningSince : undefined);
    this.item.text = look.text;
    // While no entry point is chosen, a click offers the mains to choose from.
    const choosing = s.kind === "server" && s.status.state === "choose";
    const restricted = s.kind === "server" && s.status.state === "restricted";
    this.item.command = restricted
      ? "workbench.trust.manage"
      : choosing
        ? "bloatlens.profileEntryPoint"
        : "bloatlens.profileCurrentMain";
    const actions = restricted
      ? "[Manage Workspace Trust](command:workbench.trust.manage) · [Output](command:bloatlens.showOutput)"
      : "[Profile again](command:bloatlens.profileCurrentMain) · [Choose entry point](command:bloatlens.profileEntryPoint) · [Output](command:bloatlens.showOutput)";
    const tip = new vscode.MarkdownString(`${look.tooltip}\n\n${actions}`);
    tip.isTrusted = {
      enabledCommands: ["bloatlens.profileCurrentMain", "bloatlens.profileEntryPoint", "bloatlens.showOutput", "workbench.trust.manage"],
    };
    this.item.tooltip = tip;
    this.item.backgroundColor = look.error
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : look.warning
        ? new vscode.ThemeColor("statusBarItem.warningBackground")
        : undefined;
    this.item.show();
  }

  dispose(): void {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.item.dispose();
  }
}
