/** Whether a process is still there. Node's built-ins only (the build server's client uses it). */

/** True while process `pid` exists, whoever owns it (EPERM: it does, but is another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
