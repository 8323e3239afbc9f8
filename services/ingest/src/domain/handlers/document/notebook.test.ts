import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RejectedItem } from '../handler.js';
import { parseDoc } from '../testing/parse.js';

const NOTEBOOK = 'application/x-ipynb+json';
const notebook = (value: unknown) =>
  parseDoc(NOTEBOOK, Buffer.from(JSON.stringify(value)), { filename: 'analysis.ipynb' });

/** Jupyter notebooks as Jupyter writes them (nbformat 4) and as IPython 1–2 did (nbformat 3). */
describe('Jupyter notebooks', () => {
  it('reads Markdown cells, code cells in their language and what they printed, in order; images left out', async () => {
    const item = await notebook({
      cells: [
        { cell_type: 'markdown', metadata: {}, source: ['# Churn analysis\n', '\n', 'Which **customers** leave.'] },
        {
          cell_type: 'code',
          execution_count: 1,
          metadata: {},
          source: ['import pandas as pd\n', "df = pd.read_csv('churn.csv')\n", 'len(df)'],
          outputs: [
            { output_type: 'stream', name: 'stdout', text: ['loaded\n'] },
            { output_type: 'execute_result', execution_count: 1, data: { 'text/plain': ['7043'] }, metadata: {} },
            { output_type: 'display_data', data: { 'image/png': 'iVBORw0KGgoAAAANSUhEUg==' }, metadata: {} },
          ],
        },
        { cell_type: 'markdown', source: '## Model' },
        {
          cell_type: 'code',
          source: 'model.fit(X)',
          outputs: [{ output_type: 'error', ename: 'NameError', evalue: "name 'model' is not defined", traceback: [] }],
        },
        { cell_type: 'raw', source: 'raw text' },
      ],
      metadata: { kernelspec: { language: 'python', name: 'python3' }, language_info: { name: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    });
    assert.equal(item.title, 'Churn analysis');
    assert.equal(
      item.text,
      [
        '# Churn analysis\n\nWhich **customers** leave.',
        "```python\nimport pandas as pd\ndf = pd.read_csv('churn.csv')\nlen(df)\n```",
        'loaded\n7043',
        '## Model',
        '```python\nmodel.fit(X)\n```',
        "NameError: name 'model' is not defined",
        'raw text',
      ].join('\n\n'),
    );
    assert.deepEqual(item.meta.format === 'notebook' && item.meta.headings, ['Churn analysis', 'Model']);
  });

  it("takes the notebook's own title, and reads nbformat 3's worksheets, inputs and heading cells", async () => {
    const item = await notebook({
      metadata: { name: 'old', title: 'Lab notes' },
      nbformat: 3,
      worksheets: [
        {
          cells: [
            { cell_type: 'heading', level: 1, source: 'Titration' },
            {
              cell_type: 'code',
              language: 'python',
              input: ['v = 12.5\n', 'print(v)'],
              outputs: [{ output_type: 'pyout', text: ['12.5'] }],
            },
          ],
        },
      ],
    });
    assert.equal(item.title, 'Lab notes');
    assert.match(item.text, /^Titration\n\n```\nv = 12.5\nprint\(v\)\n```\n\n12.5$/);
  });

  it('refuses what is no notebook, saying why', async () => {
    await assert.rejects(parseDoc(NOTEBOOK, Buffer.from('{"cells": [')), (error: RejectedItem) =>
      /^not a Jupyter notebook: its JSON does not parse/.test(error.reason),
    );
    await assert.rejects(
      notebook({ nbformat: 4 }),
      (error: RejectedItem) => error.reason === 'not a Jupyter notebook: it has no cells',
    );
  });
});
