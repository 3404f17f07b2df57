/**
 * Test servers on loopback that stand where Redis should be: `silent` accepts connections and
 * never writes a byte (a stopped redis-server, a firewall that swallows replies, a port that is
 * not Redis); `answersFirst` answers the first connection like Redis (enough RESP for a client's
 * ready check and PING) and is silent on every later one (a Redis that stopped answering between
 * a command's first look and its real work).
 */
import { createServer, type Server, type Socket } from 'node:net';

export interface FakeRedis {
  /** `redis://user:secret@127.0.0.1:PORT/`: credentials in it, to check that none is printed. */
  url: string;
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** The commands in `buffer` (RESP arrays of bulk strings), and what is left of it. */
function takeCommands(buffer: string): { commands: string[][]; rest: string } {
  const commands: string[][] = [];
  let at = 0;
  for (;;) {
    const start = at;
    const head = buffer.indexOf('\r\n', at);
    if (buffer[at] !== '*' || head < 0) return { commands, rest: buffer.slice(start) };
    const count = Number(buffer.slice(at + 1, head));
    at = head + 2;
    const args: string[] = [];
    for (let i = 0; i < count; i++) {
      const lenEnd = buffer.indexOf('\r\n', at);
      if (lenEnd < 0) return { commands, rest: buffer.slice(start) };
      const len = Number(buffer.slice(at + 1, lenEnd));
      if (buffer.length < lenEnd + 2 + len + 2) return { commands, rest: buffer.slice(start) };
      args.push(buffer.slice(lenEnd + 2, lenEnd + 2 + len));
      at = lenEnd + 2 + len + 2;
    }
    commands.push(args);
  }
}

function answer(command: string[]): string {
  const name = (command[0] ?? '').toUpperCase();
  if (name === 'PING') return '+PONG\r\n';
  if (name === 'INFO') {
    const info = '# Server\r\nredis_version:7.2.0\r\nloading:0\r\n';
    return `$${Buffer.byteLength(info)}\r\n${info}\r\n`;
  }
  if (name === 'GET' || name === 'HGET') return '$-1\r\n';
  return '+OK\r\n';
}

function speakRedis(socket: Socket): void {
  let buffer = '';
  socket.on('data', (chunk: Buffer) => {
    const { commands, rest } = takeCommands(buffer + chunk.toString('latin1'));
    buffer = rest;
    for (const command of commands) {
      socket.write(answer(command));
      if ((command[0] ?? '').toUpperCase() === 'QUIT') socket.end();
    }
  });
}

export async function startFakeRedis(mode: 'silent' | 'answersFirst'): Promise<FakeRedis> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (mode === 'answersFirst' && accepted === 1) speakRedis(socket);
    else socket.on('data', () => {}); // read, never answer
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://user:secret@127.0.0.1:${port}/`,
    port,
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
