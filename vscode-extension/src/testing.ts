// A test-only command for the end-to-end test in a real VS Code: writes what the editor shows
// (diagnostics with related locations, code lenses, hovers, the quick fixes offered on them, the
// cursor, the status bar's state)
// to the JSON file named by BLOATLENS_TEST_DUMP. Registered, and in the palette, only when that
// variable is set.

import { promises as fs } from "node:fs";
import * as vscode from "vscode";
import type { StatusBar } from "./status";

export function register(status: StatusBar): vscode.Disposable[] {
  const out = process.env.BLOATLENS_TEST_DUMP;
  if (!out) return [];
  void vscode.commands.executeCommand("setContext", "bloatlens.testMode", true);
  return [vscode.commands.registerCommand("bloatlens.test.dumpState", () => dump(out, status))];
}

const line = (r: vscode.Range) => r.start.line;

async function dump(out: string, status: StatusBar): Promise<void> {
  // The status first: the server publishes its state before the status that follows it, so
  // everything read after the status is at least as new as the status says.
  const current = status.current;
  const runs = status.runs;
  const diagnostics = vscode.languages.getDiagnostics().map(([uri, ds]) => ({
    uri: uri.toString(),
    diagnostics: ds.map((d) => ({
      message: d.message,
      source: d.source,
      code: typeof d.code === "object" ? d.code.value : d.code,
      severity: vscode.DiagnosticSeverity[d.severity],
      line: line(d.range),
      related: (d.relatedInformation ?? []).map((r) => ({
        uri: r.location.uri.toString(),
        line: line(r.location.range),
        message: r.message,
      })),
    })),
  }));
  const editor = vscode.window.activeTextEditor;
  let lenses: { line: number; title: string | undefined }[] = [];
  let hovers: { line: number; text: string }[] = [];
  let quickFixes: { line: number; title: string }[] = [];
  if (editor) {
    const uri = editor.document.uri;
    const found = (await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", uri, 100)) ?? [];
    lenses = found.map((l) => ({ line: line(l.range), title: l.command?.title }));
    for (const d of vscode.languages.getDiagnostics(uri).filter((d) => d.source === "bloatlens")) {
      const hs = (await vscode.commands.executeCommand<vscode.Hover[]>("vscode.executeHoverProvider", uri, d.range.start)) ?? [];
      const text = hs
        .flatMap((h) => h.contents)
        .map((c) => (typeof c === "string" ? c : c.value))
        .join("\n");
      hovers.push({ line: line(d.range), text });
      const actions =
        (await vscode.commands.executeCommand<vscode.CodeAction[]>("vscode.executeCodeActionProvider", uri, d.range)) ?? [];
      for (const a of actions.filter((a) => a.edit !== undefined)) quickFixes.push({ line: line(d.range), title: a.title });
    }
  }
  const state = {
    diagnostics,
    editor: editor && {
      uri: editor.document.uri.toString(),
      line: editor.selection.active.line,
      character: editor.selection.active.character,
    },
    lenses,
    hovers,
    quickFixes,
    status: current,
    runs,
  };
  await fs.writeFile(out, JSON.stringify(state, null, 2));
}
