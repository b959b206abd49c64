// TODO(in progress): the ttl-after-finished-controller. Until it is written its descriptor starts nothing.
import type { ControllerDescriptor } from './context.js';

export const ttlAfterFinishedControllerDescriptor: ControllerDescriptor = {
  name: 'ttl-after-finished-controller',
  async run(ctx) {
    ctx.log.warn('Controller not written yet', { controller: 'ttl-after-finished-controller' });
  },
};
