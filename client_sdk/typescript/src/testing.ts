/**
 * For integration tests against the real service: start utilityd replicas
 * on loopback, find a free port, a seeded random generator. The binary is
 * UTILITYD and the repository (for the example sets) UTILITYD_REPO in the
 * environment, unless given. Imported as "@utilityd/client/testing".
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The utilityd binary (UTILITYD). */
export const binary = process.env.UTILITYD ?? "";
/** The repository, for examples/behaviour_sets (UTILITYD_REPO). */
export const repo = process.env.UTILITYD_REPO ?? "";

/** mulberry32: a seeded generator of numbers in [0, 1), so that a failing test repeats. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One utilityd process. */
export interface Replica {
  port: number;
  httpPort: number;
  process: ChildProcess;
  dir: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A free loopback port (bound and released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts utilityd on loopback `port` (0: any free one) with the example
 * sets and `extra` flags; resolves once it listens (its ports written).
 */
export async function startReplica(port = 0, extra: string[] = []): Promise<Replica> {
  if (binary === "" || repo === "") throw new Error("set UTILITYD and UTILITYD_REPO");
  const dir = mkdtempSync(join(tmpdir(), "utilityd-ts-"));
  const portFile = join(dir, "ports");
  const child = spawn(
    binary,
    [
      `--grpc_address=127.0.0.1:${port}`,
      "--http_address=127.0.0.1:0",
      `--port_file=${portFile}`,
      `--config_dir=${join(repo, "examples/behaviour_sets")}`,
      ...extra,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const deadline = Date.now() + 20000;
  while (!(existsSync(portFile) && readFileSync(portFile, "utf8").trim().split(/\s+/).length >= 2)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("utilityd did not start");
    await new Promise((r) => setTimeout(r, 20));
  }
  const [grpcPort, httpPort] = readFileSync(portFile, "utf8").trim().split(/\s+/).map(Number);
  return {
    port: grpcPort,
    httpPort,
    process: child,
    dir,
    stop: async (signal: NodeJS.Signals = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill(signal);
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
