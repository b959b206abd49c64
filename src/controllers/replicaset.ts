import type { ControllerDescriptor } from './context.js';

export const replicaSetControllerDescriptor: ControllerDescriptor = {
  name: 'replicaset-controller',
  async run(ctx) {
    ctx.log.warn('Controller not written yet', { controller: 'replicaset-controller' });
  },
};
export const replicationControllerDescriptor: ControllerDescriptor = {
  name: 'replicationcontroller-controller',
  async run(ctx) {
    ctx.log.warn('Controller not written yet', { controller: 'replicationcontroller-controller' });
  },
};
