// SoL-Pi with Online Context Compact's retained tail set through the factory option. Pi
// 0.84.2 has no `pi.getSettings()`, so the demo's `compaction.keepRecentTokens` setting
// reaches OCC this way there; Pi 1.x loads the package itself and reads the setting.
import { createSolPiExtension } from "../../sol-napi/sol-pi/index.ts";
import { KEEP_RECENT_TOKENS } from "./settings.mjs";

export default createSolPiExtension({ keepRecentTokens: KEEP_RECENT_TOKENS });
