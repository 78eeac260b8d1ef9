/**
 * Debian's `python3-kubernetes` (the official Kubernetes Python client) for
 * tests that hold the dev cluster fixture to a second real client. Installed
 * with apt when missing and the tests run as root (CI's fresh machine);
 * otherwise the error says how to install it. Debian's python, not one on
 * PATH: the package installs into /usr/lib/python3/dist-packages.
 */
import { execFileSync } from 'node:child_process';

export const DEBIAN_PYTHON = '/usr/bin/python3';

const importable = (): boolean => {
  try {
    execFileSync(DEBIAN_PYTHON, ['-c', 'import kubernetes'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Makes sure Debian's python3-kubernetes is installed; installs it as root. Returns the python to run it with. */
export function ensurePythonKubernetes(): string {
  if (importable()) return DEBIAN_PYTHON;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `the Python kubernetes client is missing from ${DEBIAN_PYTHON}: install Debian's python3-kubernetes package (apt-get install -y python3-kubernetes)`,
    );
  }
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync('apt-get', ['install', '-y', 'python3-kubernetes'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!importable()) throw new Error(`apt-get installed python3-kubernetes but ${DEBIAN_PYTHON} cannot import kubernetes`);
  return DEBIAN_PYTHON;
}
