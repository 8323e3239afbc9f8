import { loadConfig } from '@memex/config';
import { startTracing } from '@memex/telemetry';
import { startGateway } from './app.js';

const config = loadConfig();
startTracing({ serviceName: 'memex-gateway', otlpEndpoint: config.otlpEndpoint });
const app = await startGateway(config);
console.log(`memex gateway on http://${config.host}:${config.port}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void app.close().then(() => process.exit(0)));
}
