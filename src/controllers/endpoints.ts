// TODO(in progress): the endpoints-controller. Until it is written its descriptor starts nothing.
import type { ControllerDescriptor } from './context.js';

export const endpointsControllerDescriptor: ControllerDescriptor = {
  name: 'endpoints-controller',
  async run(ctx) {
    ctx.log.warn('Controller not written yet', { controller: 'endpoints-controller' });
  },
};
