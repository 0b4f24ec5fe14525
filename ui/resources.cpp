#include "ui/resources.h"

#include <QtGlobal>

// Q_INIT_RESOURCE must be used outside of any namespace.
static void initAirlockResources()
{
    Q_INIT_RESOURCE(airlock);
}

namespace airlock {

void initUiResources()
{
    initAirlockResources();
}

} // namespace airlock
