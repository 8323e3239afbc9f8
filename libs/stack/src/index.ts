export { freePort, isPortFree, assertPortFree } from './ports.js';
export { isAlive, processStartTime, terminate, waitForExit, findExecutable } from './process.js';
export {
  findPostgresBinaries,
  startPostgres,
  prepareDatabase,
  type PostgresBinaries,
  type PostgresOptions,
  type PostgresHandle,
} from './postgres.js';
export { findNatsServer, startNats, type NatsBinary, type NatsOptions, type NatsHandle } from './nats.js';
export { postgresServerUser, prepareServerDir, makeServerTempDir, type ServerUser } from './server-user.js';
export {
  stackPaths,
  readStackState,
  runningStack,
  writeStackState,
  stopStack,
  stopLeftoverServices,
  assertNoRunningStack,
  StackRunningError,
  type StackPaths,
  type StackState,
  type RecordedProcess,
  type StopStackResult,
} from './state.js';
export {
  ProcessSupervisor,
  type ServiceSpec,
  type ManagedServer,
  type SupervisorOptions,
  type ServiceStatus,
} from './supervisor.js';
export { startLocalServers, type LocalServersOptions, type LocalServers } from './local-servers.js';
