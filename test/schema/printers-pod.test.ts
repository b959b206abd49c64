// The Pod table: READY, STATUS and RESTARTS in every state the Kubernetes 1.33 pod printer knows.
// Expected cells follow Kubernetes' printer rules (and the cases of its printer tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { printerFor } from '../../src/schema/printers/index.js';

const NOW = Date.parse('2025-05-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace('.000Z', 'Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const pod = printerFor('', 'Pod')!;

function mk(spec: any, status: any, meta: any = {}): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', ...meta }, spec, status };
}
const containers = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: `img${i}` }));
const inits = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `i${i}`, image: `init${i}` }));
const running = { running: { startedAt: ago(H) } };
/** the first five cells: NAME READY STATUS RESTARTS AGE */
const row = (p: any) => pod.cells(p, NOW).slice(0, 5);

test('pod columns are Kubernetes 1.33 columns', () => {
  assert.deepEqual(
    pod.columns.map((c) => [c.name, c.type, c.format, c.priority]),
    [
      ['Name', 'string', 'name', 0],
      ['Ready', 'string', '', 0],
      ['Status', 'string', '', 0],
      ['Restarts', 'string', '', 0],
      ['Age', 'string', '', 0],
      ['IP', 'string', '', 1],
      ['Node', 'string', '', 1],
      ['Nominated Node', 'string', '', 1],
      ['Readiness Gates', 'string', '', 1],
    ],
  );
  for (const c of pod.columns) assert.ok(c.description.length > 10, c.name);
});

test('running pod: full wide row', () => {
  const p = mk(
    { containers: containers(1), nodeName: 'node1' },
    {
      phase: 'Running',
      podIP: '10.0.0.1',
      podIPs: [{ ip: '10.0.0.1' }],
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'c0', ready: true, restartCount: 0, state: running }],
    },
    { creationTimestamp: ago(5 * M) },
  );
  assert.deepEqual(pod.cells(p, NOW), ['p', '1/1', 'Running', '0', '5m', '10.0.0.1', 'node1', '<none>', '<none>']);
  assert.equal(pod.conditions!(p), undefined);
});

test('restarts are summed; the phase shows when containers say nothing', () => {
  const p = mk(
    { containers: containers(2) },
    { phase: 'podPhase', containerStatuses: [{ ready: true, restartCount: 3, state: running }, { restartCount: 3 }] },
  );
  assert.deepEqual(row(p), ['p', '1/2', 'podPhase', '6', '<unknown>']);
});

test('a waiting reason overrides the phase; the first container in spec order wins', () => {
  assert.deepEqual(
    row(
      mk(
        { containers: containers(2) },
        {
          phase: 'Running',
          containerStatuses: [
            { ready: true, restartCount: 3, state: running },
            { restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } } },
          ],
        },
      ),
    ),
    ['p', '1/2', 'CrashLoopBackOff', '6', '<unknown>'],
  );
  assert.deepEqual(
    row(
      mk(
        { containers: containers(2) },
        {
          phase: 'Running',
          containerStatuses: [
            { restartCount: 3, state: { waiting: { reason: 'ContainerWaitingReason' } } },
            { restartCount: 3, state: { terminated: { reason: 'ContainerTerminatedReason', exitCode: 1 } } },
          ],
        },
      ),
    ),
    ['p', '0/2', 'ContainerWaitingReason', '6', '<unknown>'],
  );
});

test('ready without running is not counted; pod reason overrides phase', () => {
  const statuses = [{ ready: true, restartCount: 3, state: running }, { ready: true, restartCount: 3 }];
  assert.deepEqual(row(mk({ containers: containers(2) }, { phase: 'podPhase', containerStatuses: statuses })), [
    'p',
    '1/2',
    'podPhase',
    '6',
    '<unknown>',
  ]);
  assert.deepEqual(row(mk({ containers: containers(2) }, { phase: 'podPhase', reason: 'podReason', containerStatuses: statuses })), [
    'p',
    '1/2',
    'podReason',
    '6',
    '<unknown>',
  ]);
  // Evicted pods carry their reason.
  assert.deepEqual(row(mk({ containers: containers(1) }, { phase: 'Failed', reason: 'Evicted' })), ['p', '0/1', 'Evicted', '0', '<unknown>']);
});

test('one container completed, another running: Running when Ready, else NotReady', () => {
  const statuses = [
    { ready: true, restartCount: 3, state: { terminated: { reason: 'Completed', exitCode: 0 } } },
    { ready: true, restartCount: 3, state: running },
  ];
  assert.deepEqual(row(mk({ containers: containers(2) }, { phase: 'Running', containerStatuses: statuses })), [
    'p',
    '1/2',
    'NotReady',
    '6',
    '<unknown>',
  ]);
  assert.deepEqual(
    row(mk({ containers: containers(2) }, { phase: 'Running', containerStatuses: statuses, conditions: [{ type: 'Ready', status: 'True' }] })),
    ['p', '1/2', 'Running', '6', '<unknown>'],
  );
});

test('terminated containers without a reason: ExitCode:N or Signal:N', () => {
  assert.deepEqual(
    row(mk({ containers: containers(1) }, { phase: 'Running', containerStatuses: [{ state: { terminated: { exitCode: 137 } } }] })),
    ['p', '0/1', 'ExitCode:137', '0', '<unknown>'],
  );
  assert.deepEqual(
    row(mk({ containers: containers(1) }, { phase: 'Running', containerStatuses: [{ state: { terminated: { exitCode: 0, signal: 9 } } }] })),
    ['p', '0/1', 'Signal:9', '0', '<unknown>'],
  );
});

test('init containers: Init:i/n while one runs, restarts and the last restart time', () => {
  // one init container running after 3 restarts, the app container waiting without a reason
  assert.deepEqual(
    row(
      mk(
        { initContainers: inits(1), containers: containers(1) },
        {
          phase: 'Pending',
          initContainerStatuses: [{ name: 'i0', restartCount: 3, state: running, lastState: { terminated: { exitCode: 1, finishedAt: ago(10 * S) } } }],
          containerStatuses: [{ name: 'c0', restartCount: 0, state: { waiting: {} } }],
        },
      ),
    ),
    ['p', '0/1', 'Init:0/1', '3 (10s ago)', '<unknown>'],
  );
  // first of two running, second waiting
  assert.deepEqual(
    row(
      mk(
        { initContainers: inits(2), containers: containers(1) },
        {
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'i0', restartCount: 3, state: running, lastState: { terminated: { exitCode: 1, finishedAt: ago(10 * S) } } },
            { name: 'i1', state: { waiting: {} } },
          ],
          containerStatuses: [{ name: 'c0', state: { waiting: {} } }],
        },
      ),
    ),
    ['p', '0/1', 'Init:0/2', '3 (10s ago)', '<unknown>'],
  );
  // first done, second running: restarts of both init containers, latest restart time
  assert.deepEqual(
    row(
      mk(
        { initContainers: inits(2), containers: containers(1) },
        {
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'i0', restartCount: 2, state: { terminated: { exitCode: 0 } }, lastState: { terminated: { exitCode: 1, finishedAt: ago(2 * M) } } },
            { name: 'i1', restartCount: 3, state: running, lastState: { terminated: { exitCode: 1, finishedAt: ago(10 * S) } } },
          ],
          containerStatuses: [{ name: 'c0', state: { waiting: {} } }],
        },
      ),
    ),
    ['p', '0/1', 'Init:1/2', '5 (10s ago)', '<unknown>'],
  );
});

test('init containers: failures and waiting reasons', () => {
  const one = (state: any, extra: any = {}) =>
    row(
      mk(
        { initContainers: inits(1), containers: containers(1) },
        { phase: 'Pending', initContainerStatuses: [{ name: 'i0', state, ...extra }], containerStatuses: [{ name: 'c0', state: { waiting: { reason: 'PodInitializing' } } }] },
      ),
    )[2];
  assert.equal(one({ waiting: { reason: 'CrashLoopBackOff' } }), 'Init:CrashLoopBackOff');
  assert.equal(one({ waiting: { reason: 'ImagePullBackOff' } }), 'Init:ImagePullBackOff');
  // PodInitializing is not a reason to show: the position is shown instead
  assert.equal(one({ waiting: { reason: 'PodInitializing' } }), 'Init:0/1');
  assert.equal(one({ terminated: { exitCode: 1, reason: 'Error' } }), 'Init:Error');
  assert.equal(one({ terminated: { exitCode: 2 } }), 'Init:ExitCode:2');
  assert.equal(one({ terminated: { exitCode: 137, signal: 9 } }), 'Init:Signal:9');
  assert.equal(one({}), 'Init:0/1');
});

test('after initialization only app containers (and sidecars) count for restarts', () => {
  assert.deepEqual(
    row(
      mk(
        { initContainers: inits(1), containers: containers(1) },
        {
          phase: 'Running',
          initContainerStatuses: [
            { name: 'i0', restartCount: 2, state: { terminated: { exitCode: 0 } }, lastState: { terminated: { exitCode: 1, finishedAt: ago(2 * M) } } },
          ],
          containerStatuses: [
            { name: 'c0', restartCount: 4, state: running, lastState: { terminated: { exitCode: 1, finishedAt: ago(20 * S) } } },
          ],
        },
      ),
    ),
    ['p', '0/1', 'Running', '4 (20s ago)', '<unknown>'],
  );
});

test('restart ages: days, and the most recent of several containers', () => {
  const c = (restartCount: number, finished: number) => ({
    ready: true,
    restartCount,
    state: running,
    lastState: { terminated: { exitCode: 1, finishedAt: ago(finished) } },
  });
  assert.deepEqual(row(mk({ containers: containers(1) }, { phase: 'Running', containerStatuses: [c(3, 5 * D)] })), [
    'p',
    '1/1',
    'Running',
    '3 (5d ago)',
    '<unknown>',
  ]);
  assert.deepEqual(
    row(mk({ containers: containers(2) }, { phase: 'Running', containerStatuses: [{ ready: true, restartCount: 0, state: running }, c(3, 10 * D)] })),
    ['p', '2/2', 'Running', '3 (10d ago)', '<unknown>'],
  );
  assert.deepEqual(row(mk({ containers: containers(2) }, { phase: 'Running', containerStatuses: [c(6, 5 * D), c(3, 20 * D)] })), [
    'p',
    '2/2',
    'Running',
    '9 (5d ago)',
    '<unknown>',
  ]);
  // restarts without a recorded termination time: the bare number
  assert.deepEqual(row(mk({ containers: containers(1) }, { phase: 'Running', containerStatuses: [{ restartCount: 2, state: running, ready: true }] })), [
    'p',
    '1/1',
    'Running',
    '2',
    '<unknown>',
  ]);
});

test('scheduling gates', () => {
  assert.deepEqual(
    row(
      mk({ containers: containers(2), schedulingGates: [{ name: 'g' }] }, {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
      }),
    ),
    ['p', '0/2', 'SchedulingGated', '0', '<unknown>'],
  );
});

test('completed and failed pods carry a Completed row condition', () => {
  const done = mk(
    { containers: containers(1) },
    { phase: 'Succeeded', containerStatuses: [{ ready: false, restartCount: 0, state: { terminated: { reason: 'Completed', exitCode: 0 } } }] },
  );
  assert.deepEqual(row(done), ['p', '0/1', 'Completed', '0', '<unknown>']);
  assert.deepEqual(pod.conditions!(done), [
    { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
  ]);
  const failed = mk(
    { containers: containers(1) },
    { phase: 'Failed', containerStatuses: [{ ready: false, restartCount: 0, state: { terminated: { reason: 'Error', exitCode: 1 } } }] },
  );
  assert.deepEqual(row(failed), ['p', '0/1', 'Error', '0', '<unknown>']);
  assert.deepEqual(pod.conditions!(failed), [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }]);
  // the condition follows the phase even when a container still looks alive
  const odd = mk(
    { containers: containers(2) },
    { phase: 'Succeeded', containerStatuses: [{ ready: true, restartCount: 3, state: running }, { restartCount: 3 }] },
  );
  assert.deepEqual(row(odd), ['p', '1/2', 'Succeeded', '6', '<unknown>']);
  assert.equal(pod.conditions!(odd)![0].reason, 'Succeeded');
});

test('deletion: Terminating unless the pod already finished; Unknown when the node was lost', () => {
  const deleting = { deletionTimestamp: ago(10 * S) };
  assert.deepEqual(
    row(mk({ containers: containers(1) }, { phase: 'Running', containerStatuses: [{ ready: false, state: running }] }, deleting)),
    ['p', '0/1', 'Terminating', '0', '<unknown>'],
  );
  assert.deepEqual(row(mk({ containers: containers(1) }, { phase: 'Pending' }, deleting)), ['p', '0/1', 'Terminating', '0', '<unknown>']);
  const finished = mk(
    { containers: containers(1) },
    { phase: 'Succeeded', containerStatuses: [{ state: { terminated: { reason: 'Completed', exitCode: 0 } } }] },
    deleting,
  );
  assert.deepEqual(row(finished), ['p', '0/1', 'Completed', '0', '<unknown>']);
  assert.ok(pod.conditions!(finished));
  assert.deepEqual(row(mk({ containers: containers(1) }, { phase: 'Running', reason: 'NodeLost' }, deleting)), [
    'p',
    '0/1',
    'Unknown',
    '0',
    '<unknown>',
  ]);
});

test('sidecars (restartable init containers)', () => {
  const spec = {
    initContainers: [
      { name: 'sidecar-1', image: 's1', restartPolicy: 'Always' },
      { name: 'sidecar-2', image: 's2', restartPolicy: 'Always' },
    ],
    containers: containers(1),
  };
  const tenSecAgo = { terminated: { exitCode: 1, finishedAt: ago(10 * S) } };
  // first sidecar running but not started yet
  assert.deepEqual(
    row(
      mk(spec, {
        phase: 'Pending',
        conditions: [{ type: 'Initialized', status: 'False' }],
        initContainerStatuses: [
          { name: 'sidecar-1', restartCount: 3, state: running, started: false, lastState: tenSecAgo },
          { name: 'sidecar-2', state: { waiting: {} }, started: false },
        ],
        containerStatuses: [{ name: 'c0', state: { waiting: {} } }],
      }),
    ),
    ['p', '0/3', 'Init:0/2', '3 (10s ago)', '<unknown>'],
  );
  // first started, second running but not started
  assert.deepEqual(
    row(
      mk(spec, {
        phase: 'Pending',
        conditions: [{ type: 'Initialized', status: 'False' }],
        initContainerStatuses: [
          { name: 'sidecar-1', restartCount: 3, state: running, started: true, lastState: tenSecAgo },
          { name: 'sidecar-2', state: running, started: false },
        ],
        containerStatuses: [{ name: 'c0', state: { waiting: {} } }],
      }),
    ),
    ['p', '0/3', 'Init:1/2', '3 (10s ago)', '<unknown>'],
  );
  // both started and ready, app container running: sidecars count towards READY and RESTARTS
  assert.deepEqual(
    row(
      mk(spec, {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }],
        initContainerStatuses: [
          { name: 'sidecar-1', ready: true, restartCount: 3, state: running, started: true, lastState: tenSecAgo },
          { name: 'sidecar-2', ready: true, state: running, started: true },
        ],
        containerStatuses: [
          { name: 'c0', ready: true, restartCount: 4, state: running, lastState: { terminated: { exitCode: 1, finishedAt: ago(20 * S) } } },
        ],
      }),
    ),
    ['p', '3/3', 'Running', '7 (10s ago)', '<unknown>'],
  );
  // started but not ready sidecars are not counted as ready
  assert.deepEqual(
    row(
      mk(spec, {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }],
        initContainerStatuses: [
          { name: 'sidecar-1', restartCount: 3, state: running, started: true, lastState: tenSecAgo },
          { name: 'sidecar-2', state: running, started: true },
        ],
        containerStatuses: [
          { name: 'c0', ready: true, restartCount: 4, state: running, lastState: { terminated: { exitCode: 1, finishedAt: ago(20 * S) } } },
        ],
      }),
    ),
    ['p', '1/3', 'Running', '7 (10s ago)', '<unknown>'],
  );
  // sidecars killed after the app container completed: pod Succeeded
  const done = mk(spec, {
    phase: 'Succeeded',
    conditions: [{ type: 'Initialized', status: 'True' }],
    initContainerStatuses: [
      { name: 'sidecar-1', restartCount: 3, state: { terminated: { reason: 'Error', exitCode: 137 } }, started: false, lastState: tenSecAgo },
      { name: 'sidecar-2', state: { terminated: { reason: 'Error', exitCode: 137 } }, started: false },
    ],
    containerStatuses: [
      { name: 'c0', restartCount: 4, state: { terminated: { reason: 'Completed', exitCode: 0 } }, lastState: { terminated: { exitCode: 1, finishedAt: ago(20 * S) } } },
    ],
  });
  assert.deepEqual(row(done), ['p', '0/3', 'Completed', '7 (10s ago)', '<unknown>']);
  assert.equal(pod.conditions!(done)![0].reason, 'Succeeded');
});

test('statuses for containers the spec does not name', () => {
  const p = mk(
    {
      initContainers: [
        { name: 'init1', image: 'initimage' },
        { name: 'sidecar1', image: 'sidecarimage', restartPolicy: 'Always' },
      ],
      containers: [{ name: 'container1', image: 'containerimage' }],
    },
    {
      phase: 'Running',
      initContainerStatuses: [{ name: 'initinvalid' }, { name: 'init1' }, { name: 'sidecar1' }],
      containerStatuses: [{ name: 'containerinvalid' }, { name: 'container1' }],
    },
  );
  assert.deepEqual(row(p), ['p', '0/2', 'Init:0/2', '0', '<unknown>']);
});

test('wide cells: IP, node, nominated node, readiness gates', () => {
  const p = mk(
    {
      containers: containers(2),
      nodeName: 'test1',
      readinessGates: [{ conditionType: 'condition1' }, { conditionType: 'condition2' }, { conditionType: 'condition3' }],
    },
    {
      phase: 'podPhase',
      conditions: [
        { type: 'condition1', status: 'False' },
        { type: 'condition2', status: 'True' },
      ],
      podIPs: [{ ip: '1.1.1.1' }, { ip: '2001:db8::' }],
      containerStatuses: [{ ready: true, restartCount: 3, state: running }, { restartCount: 3 }],
      nominatedNodeName: 'node1',
    },
  );
  assert.deepEqual(pod.cells(p, NOW), ['p', '1/2', 'podPhase', '6', '<unknown>', '1.1.1.1', 'test1', 'node1', '1/3']);
  const bare = mk({ containers: containers(2) }, { phase: 'Pending' });
  assert.deepEqual(pod.cells(bare, NOW).slice(5), ['<none>', '<none>', '<none>', '<none>']);
});

test('a pod with nothing set', () => {
  assert.deepEqual(pod.cells({ metadata: { name: 'x' } }, NOW), ['x', '0/0', '', '0', '<unknown>', '<none>', '<none>', '<none>', '<none>']);
  assert.deepEqual(pod.cells({}, NOW), ['', '0/0', '', '0', '<unknown>', '<none>', '<none>', '<none>', '<none>']);
});
