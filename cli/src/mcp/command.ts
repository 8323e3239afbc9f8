import fs from 'node:fs';
import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { client } from '../context.js';
import { createMcpServer } from './server.js';

const { version } = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** `memex mcp`: the MCP server on stdin/stdout, calling the gateway with MEMEX_TOKEN (so within its scope). */
export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve the memex tools to an agent over MCP (stdio), within the scope of MEMEX_TOKEN')
    .action(async () => {
      const server = createMcpServer(client(), version);
      await server.connect(new StdioServerTransport());
    });
}
