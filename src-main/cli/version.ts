export { VERSION } from '../core/instance/index.js';
