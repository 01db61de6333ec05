// Finding the language server: the `bloatlens.server.path` setting, else the binary bundled in
// the extension, else `bloatlens-lsp` on PATH. Each candidate must answer `--version` as a
// Bloatlens server. No `vscode` here: the file system and processes come in through `Probe`.

import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import * as path from "node:path";

export const SERVER_NAME = "bloatlens-lsp";

export type ServerSource = "setting" | "bundled" | "PATH";

export interface FoundServer {
  path: string;
  version: string;
  source: ServerSource;
}

/** What discovery asks of the machine. */
export interface Probe {
  isFile(file: string): Promise<boolean>;
  /** Sets the execute bits (a .vsix does not always keep them). */
  makeExecutable(file: string): Promise<void>;
  /** What `file --version` prints; rejects when it cannot run or fails. */
  version(file: string): Promise<string>;
}

export interface Where {
  /** The `bloatlens.server.path` setting ("" when unset). */
  setting: string;
  /** Where the extension bundles its binary. */
  bundled: string;
  /** The PATH to search. */
  pathEnv: string;
  home: string;
}

/** No usable server; the message says what was tried and what to do. */
export class ServerNotFound extends Error {
  constructor(
    message: string,
    readonly fixableInSettings: boolean,
  ) {
    super(message);
  }
}

const VERSION = /^bloatlens-lsp (\S+)/;

export async function findServer(where: Where, probe: Probe): Promise<FoundServer> {
  const setting = where.setting.trim();
  if (setting !== "") {
    // The user's explicit choice: never silently replaced by another binary.
    const file = setting.startsWith("~/") ? path.join(where.home, setting.slice(2)) : setting;
    if (!(await probe.isFile(file))) {
      throw new ServerNotFound(
        `bloatlens.server.path is "${setting}", but there is no file at ${file}. Fix the setting, or clear it to use the server bundled with the extension.`,
        true,
      );
    }
    return { path: file, version: await check(file, probe, "bloatlens.server.path"), source: "setting" };
  }
  const problems: string[] = [];
  if (await probe.isFile(where.bundled)) {
    try {
      await probe.makeExecutable(where.bundled);
      return { path: where.bundled, version: await check(where.bundled, probe, "the bundled server"), source: "bundled" };
    } catch (e) {
      problems.push((e as Error).message);
    }
  } else {
    problems.push(`no server is bundled with this extension (it bundles one for linux-x64 only)`);
  }
  for (const dir of where.pathEnv.split(path.delimiter).filter((d) => d !== "")) {
    const file = path.join(dir, SERVER_NAME);
    if (await probe.isFile(file)) {
      return { path: file, version: await check(file, probe, `${SERVER_NAME} on PATH`), source: "PATH" };
    }
  }
  problems.push(`there is no ${SERVER_NAME} on PATH`);
  throw new ServerNotFound(
    `Bloatlens could not start its language server: ${problems.join("; ")}. ` +
      `Build it with \`cargo build --release -p bloatlens-lsp\` in the Bloatlens repository and set bloatlens.server.path to target/release/${SERVER_NAME}, or put it on PATH.`,
    true,
  );
}

/** The version `file` reports, or an error naming `what` and what went wrong. */
async function check(file: string, probe: Probe, what: string): Promise<string> {
  let out: string;
  try {
    out = await probe.version(file);
  } catch (e) {
    throw new ServerNotFound(`${what} (${file}) does not run: ${(e as Error).message}`, true);
  }
  const m = VERSION.exec(out.trim());
  if (!m) {
    throw new ServerNotFound(`${what} (${file}) is not a Bloatlens server: --version printed "${out.trim()}"`, true);
  }
  return m[1];
}

/** The real machine. */
export const nodeProbe: Probe = {
  async isFile(file) {
    try {
      return (await fs.stat(file)).isFile();
    } catch {
      return false;
    }
  },
  async makeExecutable(file) {
    const mode = (await fs.stat(file)).mode;
    if ((mode & 0o111) !== 0o111) await fs.chmod(file, mode | 0o111);
  },
  version(file) {
    return new Promise((resolve, reject) => {
      execFile(file, ["--version"], { timeout: 10_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(stderr.trim() || err.message));
        else resolve(stdout);
      });
    });
  },
};
