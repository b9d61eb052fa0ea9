import { describeDemoRun } from './demo-run.ts';

describeDemoRun('codemachine');
