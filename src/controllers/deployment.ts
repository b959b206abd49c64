// TODO(in progress): the deployment-controller. Until it is written its descriptor starts nothing.
import type { ControllerDescriptor } from './context.js';

export const deploymentControllerDescriptor: ControllerDescriptor = {
  name: 'deployment-controller',
  async run(ctx) {
    ctx.log.warn('Controller not written yet', { controller: 'deployment-controller' });
  },
};
