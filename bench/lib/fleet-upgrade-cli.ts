/** `fleet-upgrade` run from the sources (tsx), for timing a command as the working tree has it. */
import { main } from '../../src/cli/main.js';

await main(process.argv);
