// The only place echarts modules are registered: tree-shaken core + what we draw.
import { use } from 'echarts/core';
import { LineChart } from 'echarts/charts';
import { GridComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GridComponent, CanvasRenderer]);

export { init } from 'echarts/core';
export type { EChartsCoreOption, ECharts } from 'echarts/core';
