import { loadTestServer } from '../helpers/test-server.ts';
import { removeContainer } from './postgis-container.ts';

// The embedded test cluster is kept running for the next run; a test container is removed.
const server = loadTestServer();
if (server.containerId) await removeContainer(server.containerId);
