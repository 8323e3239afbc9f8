export { HeadModule } from './head.module.js';
export { HeadLinkService } from './link/head-link.service.js';
