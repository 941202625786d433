export { announce, createLogger, LOG_LEVELS, parseLogLevel, withIds, type Logger, type LoggerInit, type LogIds, type LogLevel } from './logger';
export { forgetInLogs, isSecretKey, REDACTED, redactValue, scrubString, serializeError, urlForms, withoutForgotten } from './redact';
