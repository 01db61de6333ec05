// The extension's commands. Profiling and walking a finding's places (a copy chain's hops, a call
// path's calls) are the server's commands (`bloatlens.profile`, `nextHop`, `prevHop`, `showChain`,
// `entryPoints`); these wrap them with the editor's cursor and VS Code's pickers. What they say
// about a finding is the server's words.

import * as vscode from "vscode";
import type { Session } from "./session";

interface Place {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

interface Hop extends Place {
  role: string;
}

interface Places {
  kind: string;
  /** The picker's title, in the server's words: `copy chain · 5 places`. */
  title: string;
  hops: Hop[];
}

interface EntryPoint {
  class: string;
  /** The main's file; null for a launch configuration whose main is not in the workspace. */
  uri: string | null;
  /** A launch.json configuration's name (the server runs it as `launch:<name>`), and its label. */
  launch?: string;
  label?: string;
}

interface HopResult extends Place {
  hop: number;
  /** The walked finding's identity, passed back on the next step. */
  chain: string;
  of: number;
  /** The step in the server's words: `stop 2 of 5 of the call path`. */
  message: string;
}

export function register(session: Session): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("bloatlens.profileCurrentMain", () => profileCurrentMain(session)),
    vscode.commands.registerCommand("bloatlens.profileEntryPoint", () => profileEntryPoint(session)),
    vscode.commands.registerCommand("bloatlens.profileTests", (folder?: vscode.Uri) => profileTests(session, folder)),
    vscode.commands.registerCommand("bloatlens.goToNextHop", () => goToHop(session, "bloatlens.nextHop")),
    vscode.commands.registerCommand("bloatlens.goToPreviousHop", () => goToHop(session, "bloatlens.prevHop")),
    vscode.commands.registerCommand("bloatlens.pickChainHop", () => pickChainHop(session, cursorArgs(session))),
    vscode.commands.registerCommand("bloatlens.restartServer", () => session.restart()),
    vscode.commands.registerCommand("bloatlens.showOutput", () => session.log.show()),
  ];
}

/** The active Java editor's document and cursor, as the server's command arguments. */
function cursorArgs(session: Session): unknown[] | undefined {
  const editor = vscode.window.activeTextEditor;
  const c2p = session.client?.code2ProtocolConverter;
  if (!editor || editor.document.languageId !== "java" || !c2p) return undefined;
  return [c2p.asUri(editor.document.uri), c2p.asPosition(editor.selection.active)];
}

async function profileCurrentMain(session: Session): Promise<void> {
  // The server chooses: the bloatlens.mainClass setting, else this file's main, else the only one.
  const args = cursorArgs(session)?.slice(0, 1) ?? [];
  await session.command("bloatlens.profile", args);
}

async function profileEntryPoint(session: Session): Promise<void> {
  const mains = await session.command<EntryPoint[]>("bloatlens.entryPoints", cursorArgs(session)?.slice(0, 1) ?? []);
  if (mains === undefined) return;
  if (mains.length === 0) {
    void vscode.window.showInformationMessage("Bloatlens: no class in this workspace has a main method.");
    return;
  }
  const picked = await vscode.window.showQuickPick(
    mains.map((m) => ({
      label: m.launch !== undefined ? (m.label ?? `launch.json: ${m.launch}`) : m.class,
      // A launch configuration: its main class; a main: its file.
      description: m.launch !== undefined || m.uri === null ? m.class : vscode.workspace.asRelativePath(vscode.Uri.parse(m.uri)),
      main: m,
    })),
    {
      title: "Bloatlens: profile which main?",
      placeHolder: "A class with a main method, or a Java launch configuration of launch.json (bloatlens.mainClass makes a choice stick)",
      matchOnDescription: true,
    },
  );
  if (!picked) return;
  const { main } = picked;
  // The server takes `launch:<name>` where a class would be named.
  await session.command("bloatlens.profile", [main.uri, main.launch !== undefined ? `launch:${main.launch}` : main.class]);
}

/** The server's `profile` arguments for the tests in a folder (its URI as the protocol has it):
 * the folder, then `{testsIn}` naming it. */
export function testsArgs(folder: string): unknown[] {
  return [folder, { testsIn: folder }];
}

/** Profiles every test class (as Maven's Surefire selects them) in a folder of the Explorer: a
 * package's folder of a test source root, the root, a module's folder. The server says why when
 * the folder holds no tests. */
async function profileTests(session: Session, folder: vscode.Uri | undefined): Promise<void> {
  if (!folder) {
    void vscode.window.showInformationMessage("Bloatlens: choose a folder of tests in the Explorer (its context menu: Profile Tests).");
    return;
  }
  await session.command("bloatlens.profile", testsArgs(folder.toString()));
}

/** Where the last hop command left the cursor, on which finding's walk: while the cursor stays
 * there the server is told the finding (a line may hold others) and the stop (a chain within one
 * method passes the same lines more than once). */
let lastStop: { uri: string; line: number; stop: number; chain: string } | undefined;

async function goToHop(session: Session, command: "bloatlens.nextHop" | "bloatlens.prevHop"): Promise<void> {
  const args = cursorArgs(session);
  if (!args) return;
  const [uri, position] = args as [string, { line: number }];
  if (lastStop && lastStop.uri === uri && lastStop.line === position.line) {
    args.push({ stop: lastStop.stop, chain: lastStop.chain });
  }
  // The server answers and also asks the editor to show the hop (window/showDocument).
  const result = await session.command<HopResult | null>(command, args);
  if (result === undefined) return;
  if (result === null) {
    lastStop = undefined;
    void vscode.window.showInformationMessage("Bloatlens: nothing to walk in this file (save to profile the program).");
    return;
  }
  lastStop = { uri: result.uri, line: result.range.start.line, stop: result.hop, chain: result.chain };
  vscode.window.setStatusBarMessage(`Bloatlens: ${result.message}`, 4000);
}

/** The server's `showChain` arguments for this editor's picker: a lens's own (the file, the
 * position and the finding it names), asking for the places only (`reveal: false`). */
export function placesArgs(args: unknown[]): unknown[] {
  const options = typeof args[2] === "object" && args[2] !== null ? args[2] : {};
  return [args[0], args[1], { ...options, reveal: false }];
}

/** A quick pick of a finding's places; choosing one opens it. `args` as the server's `showChain`. */
export async function pickChainHop(session: Session, args: unknown[] | undefined): Promise<void> {
  const p2c = session.client?.protocol2CodeConverter;
  if (!args || !p2c) return;
  const chain = await session.command<Places | null>("bloatlens.showChain", placesArgs(args));
  if (chain === undefined) return;
  if (chain === null) {
    void vscode.window.showInformationMessage("Bloatlens: no finding here to show (save to profile the program).");
    return;
  }
  const items = chain.hops.map((h, i) => {
    const uri = p2c.asUri(h.uri);
    return {
      label: i === 0 ? `$(warning) ${h.role}` : `$(arrow-small-right) ${h.role}`,
      description: `${vscode.workspace.asRelativePath(uri)}:${h.range.start.line + 1}`,
      uri,
      range: p2c.asRange(h.range),
    };
  });
  const open = (item: (typeof items)[number], preview: boolean) =>
    vscode.window.showTextDocument(item.uri, { selection: item.range, preview, preserveFocus: preview });
  const picked = await vscode.window.showQuickPick(items, {
    title: `Bloatlens: ${chain.title}`,
    matchOnDescription: true,
    onDidSelectItem: (item) => void open(item as (typeof items)[number], true),
  });
  if (picked) await open(picked, false);
}
