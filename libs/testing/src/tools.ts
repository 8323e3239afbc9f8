import { execFileSync } from 'node:child_process';

/**
 * Why tests that run `command` cannot run here (it is not installed: `install` says how to get
 * it), or false when it is (`command args` ran, whatever it exited with): a test's `skip`.
 */
export function missingTool(command: string, args: string[], install: string): string | false {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return `needs ${command} (${install})`;
  }
  return false;
}
