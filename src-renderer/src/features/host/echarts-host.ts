// The extra echarts pieces the host charts draw: tooltips (with the axis
// pointer used for the synced crosshair) and legends. Registered once.
import { use } from 'echarts/core';
import { LegendComponent, TooltipComponent } from 'echarts/components';

use([TooltipComponent, LegendComponent]);

export { connect, disconnect } from 'echarts/core';
