// TODO(in progress): the endpointslice-controller. Until it is written its descriptor starts nothing.
import type { ControllerDescriptor } from './context.js';

export const endpointSliceControllerDescriptor: ControllerDescriptor = {
  name: 'endpointslice-controller',
  async run(ctx) {
    ctx.log.warn('Controller not written yet', { controller: 'endpointslice-controller' });
  },
};
