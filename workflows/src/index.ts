// Every workflow the worker registers. Workflow code imports only @temporalio/workflow,
// activity types and pure modules.
export { scrapeWorkflow } from './scrape/workflow';
export { crawlWorkflow } from './crawl/workflow';
export { mapWorkflow } from './map/workflow';
export { parseWorkflow } from './parse/workflow';
export { extractWorkflow } from './extract/workflow';
export { crawlParamsWorkflow } from './crawl-params/workflow';
export { agentWorkflow } from './agent/workflow';
export { monitorTickWorkflow, monitorRunWorkflow } from './monitor/workflow';
export { interactWorkflow } from './interact/workflow';
