/**
 * How the linter tells API actions from helper rules, and write actions from
 * read actions, by name alone. oslo.policy itself does not know: a policy
 * file is one flat map. The rules here are documented in docs/policies.md.
 */

/** Rules a service reads by name from its code, though they are not API actions. */
export const WELL_KNOWN_RULES: ReadonlySet<string> = new Set([
  'default', // oslo.policy: used for any action without a rule
  'context_is_admin', // nova, cinder, glance, neutron: sets the request context's is_admin
  'context_is_advsvc', // neutron: advanced-service users
]);

/** Verbs of read-only API actions. */
const READ_VERBS: ReadonlySet<string> = new Set([
  'get', 'list', 'show', 'index', 'detail', 'details', 'check', 'view', 'read', 'search', 'discover',
  'download', 'lookup', 'query', 'describe', 'count', 'validate', 'access',
]);

/** Verbs of API actions that change something. */
const WRITE_VERBS: ReadonlySet<string> = new Set([
  'create', 'update', 'delete', 'set', 'add', 'remove', 'modify', 'put', 'post', 'patch', 'upload',
  'attach', 'detach', 'extend', 'migrate', 'reboot', 'rebuild', 'resize', 'start', 'stop', 'lock',
  'unlock', 'pause', 'unpause', 'suspend', 'resume', 'shelve', 'unshelve', 'evacuate', 'reset',
  'force', 'manage', 'unmanage', 'import', 'export', 'publicize', 'communitize', 'deactivate',
  'reactivate', 'revoke', 'grant', 'assign', 'unassign', 'associate', 'disassociate', 'accept',
  'retype', 'restore', 'purge', 'transfer', 'copy', 'rescue', 'unrescue', 'trigger', 'sync',
  'failover', 'freeze', 'thaw', 'enable', 'disable', 'change', 'rename', 'inject', 'confirm',
  'revert', 'swap', 'rotate', 'invalidate', 'approve', 'reject', 'release', 'reserve', 'unreserve',
  'allocate', 'deallocate', 'apply', 'insert', 'replace', 'move', 'clear', 'register', 'unregister',
]);

function words(segment: string): string[] {
  return segment
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[_\-.\s/]+/)
    .filter((w) => w !== '');
}

/**
 * The verb of an action name: segments (split on `:`) are read right to
 * left, words of a segment (split on `_`, `-`, `.`) left to right, and the
 * first known verb wins. `os_compute_api:servers:create:forced_host` →
 * create; `identity:check_grant` → check; `create_port:fixed_ips` → create.
 */
export function actionVerb(name: string): { verb: string; write: boolean } | undefined {
  const segments = name.split(':');
  for (let s = segments.length - 1; s >= 0; s -= 1) {
    for (const word of words(segments[s] ?? '')) {
      if (READ_VERBS.has(word)) return { verb: word, write: false };
      if (WRITE_VERBS.has(word)) return { verb: word, write: true };
    }
  }
  return undefined;
}

/**
 * A name is taken for an API action when it contains `:`
 * (`os_compute_api:servers:create`, `identity:get_user`, `volume:delete`),
 * is one of the well-known names services read, or has a known verb among
 * its words (`add_image`, `create_network`, `tasks_api_access`).
 * `admin_or_owner`, `project_member`, `network_owner` are helpers.
 */
export function looksLikeAction(name: string): boolean {
  if (name.includes(':')) return true;
  if (WELL_KNOWN_RULES.has(name)) return true;
  return actionVerb(name) !== undefined;
}

/**
 * nova's `os_compute_api:<extension>:discoverable` rules only decide whether
 * an API extension is listed to the caller (nova's defaults leave them
 * empty): no call is made under them, so they are no write action, whatever
 * verb the extension's name holds (`os-attach-interfaces`).
 */
export function isDiscoverableRule(name: string): boolean {
  return name.endsWith(':discoverable');
}

/** An action that changes something: its verb is a write verb. */
export function isWriteAction(name: string): boolean {
  return looksLikeAction(name) && !WELL_KNOWN_RULES.has(name) && !isDiscoverableRule(name) && actionVerb(name)?.write === true;
}
