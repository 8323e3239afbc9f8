/** Injection tokens for what MemexModule provides besides classes (Bus, EventPublisher, BlobStore). */
export const CONFIG = Symbol('memex:config');
export const DATABASE = Symbol('memex:database');
export const SERVICE = Symbol('memex:service-options');
