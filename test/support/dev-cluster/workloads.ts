/**
 * TEST FIXTURE (dev cluster): stand-ins for the workload controllers of
 * kube-controller-manager. No pod runs, so every Deployment, StatefulSet,
 * DaemonSet and Job reports itself rolled out (or complete) for its current
 * generation, which is what `kubectl rollout status` and Helm's wait look at.
 */
import type { Cluster } from './cluster.js';
import { isObject, type JsonObject } from './patch.js';
import { metaOf, now, type StoredChange } from './store.js';

const MANAGER = 'kube-controller-manager';
const WORKLOADS: Record<string, string> = {
  'apps/deployments': 'Deployment',
  'apps/statefulsets': 'StatefulSet',
  'apps/daemonsets': 'DaemonSet',
  'batch/jobs': 'Job',
};

function statusFor(kind: string, object: JsonObject): JsonObject {
  const spec = isObject(object.spec) ? object.spec : {};
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const observedGeneration = metaOf(object).generation ?? 1;
  const time = now();
  switch (kind) {
    case 'Job':
      return {
        succeeded: 1,
        startTime: time,
        completionTime: time,
        conditions: [{ type: 'Complete', status: 'True', lastProbeTime: time, lastTransitionTime: time }],
      };
    case 'DaemonSet':
      return {
        observedGeneration,
        currentNumberScheduled: 1,
        desiredNumberScheduled: 1,
        numberReady: 1,
        numberAvailable: 1,
        updatedNumberScheduled: 1,
        numberMisscheduled: 0,
      };
    case 'StatefulSet':
      return { observedGeneration, replicas, readyReplicas: replicas, availableReplicas: replicas, currentReplicas: replicas, updatedReplicas: replicas };
    default:
      return {
        observedGeneration,
        replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        updatedReplicas: replicas,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
            lastTransitionTime: time,
            lastUpdateTime: time,
          },
          {
            type: 'Progressing',
            status: 'True',
            reason: 'NewReplicaSetAvailable',
            message: `ReplicaSet "${metaOf(object).name}" has successfully progressed.`,
            lastTransitionTime: time,
            lastUpdateTime: time,
          },
        ],
      };
  }
}

/** Starts the workload stand-ins; returns the function that stops them. */
export function startWorkloadControllers(cluster: Cluster): () => void {
  const pending = new Set<NodeJS.Immediate>();
  const settle = (change: StoredChange) => {
    const kind = WORKLOADS[change.resource];
    if (!kind || change.type === 'DELETED') return;
    const status = isObject(change.object.status) ? change.object.status : {};
    const done = kind === 'Job' ? status.succeeded !== undefined : status.observedGeneration === metaOf(change.object).generation;
    if (done || metaOf(change.object).deletionTimestamp) return;
    // After the change has reached every watcher: a controller acts on what it observed.
    const task = setImmediate(() => {
      pending.delete(task);
      const [group] = change.resource.split('/');
      const type = cluster.types.all().find((t) => t.group === group && t.kind === kind && t.version === 'v1');
      const current = type ? cluster.find(type, change.namespace, change.name) : undefined;
      if (!type || !current) return;
      try {
        cluster.update(type, change.namespace, change.name, { ...current, status: statusFor(kind, current) }, { fieldManager: MANAGER }, 'status');
      } catch {
        // changed or gone meanwhile: the next change settles it
      }
    });
    pending.add(task);
  };
  const unsubscribe = cluster.store.subscribe(settle);
  return () => {
    unsubscribe();
    for (const task of pending) clearImmediate(task);
  };
}
