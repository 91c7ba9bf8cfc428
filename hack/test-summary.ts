// Reads vitest's JSON report and prints the one summary line CI looks for: "N passed, N failed".
import { readFileSync } from 'node:fs';

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  success: boolean;
}
const file = process.argv[2] ?? '.e2e/results.json';
let report: Report;
try {
  report = JSON.parse(readFileSync(file, 'utf8')) as Report;
} catch {
  console.log('0 passed, 1 failed (no test report was written: the suite did not run)');
  process.exit(1);
}
// A skipped test is not a pass: count it as a failure so nothing hides.
const failed = report.numFailedTests + report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${failed} failed`);
