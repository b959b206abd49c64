// TODO(in progress): the job-controller. Until it is written its descriptor starts nothing.
import type { ControllerDescriptor } from './context.js';

export const jobControllerDescriptor: ControllerDescriptor = {
  name: 'job-controller',
  async run(ctx) {
    ctx.log.warn('Controller not written yet', { controller: 'job-controller' });
  },
};
