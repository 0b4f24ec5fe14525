#pragma once

namespace airlock {

/// Registers the icons compiled into airlock_ui. A static library's resources are not
/// registered on their own; call this once before the first window (main() and UI tests).
void initUiResources();

} // namespace airlock
