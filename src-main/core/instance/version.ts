import pkg from '../../../package.json' with { type: 'json' };

/** The console's version, as every bridge reports it. */
export const VERSION: string = pkg.version;
