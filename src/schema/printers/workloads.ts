// Printers for the apps and batch kinds: Deployment, ReplicaSet, StatefulSet, DaemonSet,
// ControllerRevision, Job and CronJob.
import { age, ago, arr, containerCells, findCondition, formatLabels, formatLabelSelector, humanDuration, int, int64, nameOf, obj, parseTime, selectorString, since, str } from './format.js';
import { AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN, NAME_COLUMN, col, type Printer } from './types.js';

const SELECTOR_COLUMN = col('Selector', 'string', 'The label selector that picks the pods this object manages.', 1);

export const deploymentPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Ready', 'string', 'Ready pods out of the desired number of replicas.'),
    col('Up-to-date', 'string', 'The number of pods that run the current pod template.'),
    col('Available', 'string', 'The number of pods available to serve (ready for at least minReadySeconds).'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  cells(d: any, now: number): unknown[] {
    const spec = obj(d?.spec);
    const status = obj(d?.status);
    const [names, images] = containerCells(spec.template?.spec?.containers);
    const selector = selectorString(spec.selector);
    return [
      nameOf(d),
      `${int(status.readyReplicas)}/${int(spec.replicas, 1)}`,
      int(status.updatedReplicas),
      int(status.availableReplicas),
      age(d, now),
      names,
      images,
      selector === null ? '<invalid>' : selector,
    ];
  },
};

export const replicaSetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Desired', 'integer', 'The number of pods the replica set should run.'),
    col('Current', 'integer', 'The number of pods the replica set runs now.'),
    col('Ready', 'integer', 'The number of its pods that are ready.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  cells(rs: any, now: number): unknown[] {
    const spec = obj(rs?.spec);
    const [names, images] = containerCells(spec.template?.spec?.containers);
    return [
      nameOf(rs),
      int(spec.replicas, 1),
      int(rs?.status?.replicas),
      int(rs?.status?.readyReplicas),
      age(rs, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
};

export const statefulSetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Ready', 'string', 'Ready pods out of the desired number of replicas.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
  ],
  cells(ss: any, now: number): unknown[] {
    const spec = obj(ss?.spec);
    const [names, images] = containerCells(spec.template?.spec?.containers);
    return [nameOf(ss), `${int(ss?.status?.readyReplicas)}/${int(spec.replicas, 1)}`, age(ss, now), names, images];
  },
};

export const daemonSetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Desired', 'integer', 'The number of nodes that should run a daemon pod.'),
    col('Current', 'integer', 'The number of nodes running a daemon pod.'),
    col('Ready', 'integer', 'The number of nodes whose daemon pod is ready.'),
    col('Up-to-date', 'integer', 'The number of nodes running the current pod template.'),
    col('Available', 'integer', 'The number of nodes whose daemon pod is available.'),
    col('Node Selector', 'string', 'The node labels a node needs to run a daemon pod.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  cells(ds: any, now: number): unknown[] {
    const spec = obj(ds?.spec);
    const status = obj(ds?.status);
    const [names, images] = containerCells(spec.template?.spec?.containers);
    return [
      nameOf(ds),
      int(status.desiredNumberScheduled),
      int(status.currentNumberScheduled),
      int(status.numberReady),
      int(status.updatedNumberScheduled),
      int(status.numberAvailable),
      formatLabels(spec.template?.spec?.nodeSelector),
      age(ds, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
};

/** The group of an apiVersion ("apps/v1" -> "apps", "v1" -> ""), or null when malformed. */
function groupOf(apiVersion: string): string | null {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return '';
  if (parts.length === 2) return parts[0];
  return null;
}

export const controllerRevisionPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Controller', 'string', 'The object that owns the revision, as kind.group/name.'),
    col('Revision', 'string', 'The revision number of the stored state.'),
    AGE_COLUMN,
  ],
  cells(cr: any, now: number): unknown[] {
    const ref = arr(cr?.metadata?.ownerReferences).find((r) => r?.controller === true);
    let controller = '<none>';
    if (ref !== undefined) {
      const group = groupOf(str(ref.apiVersion));
      const kind = str(ref.kind);
      if (group === null || (group === '' && kind === '')) controller = str(ref.name);
      else controller = `${(group === '' ? kind : `${kind}.${group}`).toLowerCase()}/${str(ref.name)}`;
    }
    return [nameOf(cr), controller, int64(cr?.revision), age(cr, now)];
  },
};

/** True when the first condition of that type has status True. */
function jobCondition(job: any, type: string): boolean {
  return findCondition(job?.status?.conditions, type)?.status === 'True';
}

function jobStatus(job: any): string {
  if (jobCondition(job, 'Complete')) return 'Complete';
  if (jobCondition(job, 'Failed')) return 'Failed';
  if (job?.metadata?.deletionTimestamp) return 'Terminating';
  if (jobCondition(job, 'Suspended')) return 'Suspended';
  if (jobCondition(job, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

export const jobPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Status', 'string', 'The state of the job: Running, Complete, Failed, Suspended, FailureTarget or Terminating.'),
    col('Completions', 'string', 'Succeeded pods out of the completions the job needs.'),
    col('Duration', 'string', 'How long the job ran, or has been running.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  cells(job: any, now: number): unknown[] {
    const spec = obj(job?.spec);
    const status = obj(job?.status);
    const succeeded = int(status.succeeded);
    let completions: string;
    if (spec.completions !== undefined && spec.completions !== null) {
      completions = `${succeeded}/${int(spec.completions)}`;
    } else {
      const parallelism = int(spec.parallelism, 0);
      completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
    }
    const start = parseTime(status.startTime);
    const end = parseTime(status.completionTime);
    let duration = '';
    if (start !== null) duration = end !== null ? humanDuration(end - start) : ago(start, now);
    const [names, images] = containerCells(spec.template?.spec?.containers);
    return [nameOf(job), jobStatus(job), completions, duration, age(job, now), names, images, formatLabelSelector(spec.selector)];
  },
};

export const cronJobPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Schedule', 'string', 'The cron schedule the jobs are created on.'),
    col('Timezone', 'string', 'The time zone the schedule is read in.'),
    col('Suspend', 'boolean', 'Whether creating new jobs is suspended.'),
    col('Active', 'integer', 'The number of jobs of this cron job running now.'),
    col('Last Schedule', 'string', 'How long ago a job was last scheduled.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  cells(cj: any, now: number): unknown[] {
    const spec = obj(cj?.spec);
    const last = cj?.status?.lastScheduleTime;
    const suspend = spec.suspend === true ? 'True' : spec.suspend === false ? 'False' : '<unset>';
    const jobSpec = obj(spec.jobTemplate?.spec);
    const [names, images] = containerCells(jobSpec.template?.spec?.containers);
    return [
      nameOf(cj),
      str(spec.schedule),
      spec.timeZone != null ? str(spec.timeZone) : '<none>',
      suspend,
      arr(cj?.status?.active).length,
      last != null ? since(last, now) : '<none>',
      age(cj, now),
      names,
      images,
      formatLabelSelector(jobSpec.selector),
    ];
  },
};
