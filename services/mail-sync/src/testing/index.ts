export { Dovecot, dovecotSkip, TestSmtp } from './dovecot.js';
