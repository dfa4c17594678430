// Runs the example: a Colyseus server with one "arena" room type whose NPCs
// utilityd decides.
//
//   UTILITYD=127.0.0.1:50051 PORT=2567 node dist/server.js
import { Server } from "@colyseus/core";
import { WebSocketTransport } from "@colyseus/ws-transport";
import { NpcRoom } from "./npc_room.js";

const port = Number(process.env.PORT ?? 2567);
const server = new Server({ transport: new WebSocketTransport() });
server.define("arena", NpcRoom, { target: process.env.UTILITYD ?? "127.0.0.1:50051" });
await server.listen(port);
console.log(`colyseus on ws://localhost:${port}, NPCs decided by utilityd at ${process.env.UTILITYD ?? "127.0.0.1:50051"}`);
