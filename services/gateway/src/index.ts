export { startGateway } from './app.js';
export { GatewayModule } from './gateway.module.js';
export { ensureOwnerToken } from './auth/auth.service.js';
export { GrpcServer } from './grpc/grpc.server.js';
export { fromStruct, toStruct, type ProtoStruct } from './grpc/struct.js';
