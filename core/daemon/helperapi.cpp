#include "core/daemon/helperapi.h"

#include "core/daemon/consolehub.h"
#include "core/daemon/sandboxservice.h"
#include "core/model/jsonfields.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"
#include "core/vmm/imagestore.h"

#include <QJsonArray>

namespace airlock {

namespace {

namespace method = protocol::method;
namespace notification = protocol::notification;

/// The largest scrollback replay whose base64 still fits one 1 MiB message with room for the
/// envelope: 3/4 of (1 MiB - 4 KiB).
constexpr qsizetype kMaxReplayBytes = (protocol::kMaxMessageBytes - 4096) / 4 * 3;

constexpr int kDefaultStopTimeoutMs = 10000;

/// The `name` parameter, type-checked and validated.
Result<QString> nameParam(const QJsonObject &params)
{
    auto name = json::readString(params, QStringLiteral("name"));
    if (!name)
        return name;
    return validateName(*name);
}

template<typename T>
Result<QJsonValue> sandboxResult(const Result<T> &result)
{
    if (!result)
        return std::unexpected(result.error());
    return QJsonValue(result->toJson());
}

Result<QJsonValue> emptyResult(const Result<void> &result)
{
    if (!result)
        return std::unexpected(result.error());
    return QJsonValue(QJsonObject());
}

} // namespace

HelperApi::HelperApi(RpcServer &server, SandboxService &sandboxes, ConsoleHub &consoles,
                     const ImageStore &images, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_sandboxes(sandboxes)
    , m_consoles(consoles)
    , m_images(images)
{
    registerMethods();
    connect(&m_server, &RpcServer::clientDisconnected, this, [this](quint64 client) {
        m_subscribers.remove(client);
        m_consoles.detachAll(client);
    });
    connect(&m_sandboxes, &SandboxService::sandboxChanged, this, [this](const Sandbox &sandbox) {
        notifySubscribers(protocol::encodeNotification(
            QString::fromLatin1(notification::SandboxChanged),
            QJsonObject {{QStringLiteral("sandbox"), sandbox.toJson()}}));
    });
    connect(&m_sandboxes, &SandboxService::sandboxRemoved, this, [this](const QString &name) {
        notifySubscribers(
            protocol::encodeNotification(QString::fromLatin1(notification::SandboxRemoved),
                                         QJsonObject {{QStringLiteral("name"), name}}));
    });
    connect(&m_consoles, &ConsoleHub::output, this,
            [this](const QString &sandbox, quint64 seq, const QByteArray &bytes,
                   const QSet<quint64> &recipients) {
                if (recipients.isEmpty())
                    return;
                const QByteArray frame = protocol::encodeNotification(
                    QString::fromLatin1(notification::ConsoleOutput),
                    QJsonObject {{QStringLiteral("sandbox"), sandbox},
                                 {QStringLiteral("seq"), qint64(seq)},
                                 {QStringLiteral("data"), QString::fromLatin1(bytes.toBase64())}});
                for (quint64 client : recipients)
                    m_server.send(client, frame);
            });
}

void HelperApi::registerMethods()
{
    auto add = [this](const char *name, RpcServer::Handler handler) {
        m_server.addMethod(QString::fromLatin1(name), std::move(handler));
    };
    add(method::Hello, [this](const RpcContext &c, const QJsonObject &p) { return hello(c, p); });
    add(method::SandboxCreate, [this](const RpcContext &, const QJsonObject &params) {
        auto spec = SandboxSpec::fromJson(params);
        if (!spec)
            return Result<QJsonValue>(std::unexpected(spec.error()));
        return sandboxResult(m_sandboxes.create(*spec));
    });
    add(method::SandboxList, [this](const RpcContext &, const QJsonObject &) {
        QJsonArray sandboxes;
        for (const Sandbox &sandbox : m_sandboxes.list())
            sandboxes.append(sandbox.toJson());
        return Result<QJsonValue>(QJsonObject {{QStringLiteral("sandboxes"), sandboxes}});
    });
    add(method::SandboxGet, [this](const RpcContext &, const QJsonObject &params) {
        auto name = nameParam(params);
        if (!name)
            return Result<QJsonValue>(std::unexpected(name.error()));
        return sandboxResult(m_sandboxes.get(*name));
    });
    add(method::SandboxStart, [this](const RpcContext &, const QJsonObject &params) {
        auto name = nameParam(params);
        if (!name)
            return Result<QJsonValue>(std::unexpected(name.error()));
        return sandboxResult(m_sandboxes.start(*name));
    });
    add(method::SandboxStop, [this](const RpcContext &, const QJsonObject &params) {
        auto name = nameParam(params);
        if (!name)
            return Result<QJsonValue>(std::unexpected(name.error()));
        auto timeout = json::readInteger(params, QStringLiteral("timeoutMs"), 100, 600000,
                                         kDefaultStopTimeoutMs);
        if (!timeout)
            return Result<QJsonValue>(std::unexpected(timeout.error()));
        return sandboxResult(m_sandboxes.stop(*name, int(*timeout)));
    });
    add(method::SandboxKill, [this](const RpcContext &, const QJsonObject &params) {
        auto name = nameParam(params);
        if (!name)
            return Result<QJsonValue>(std::unexpected(name.error()));
        return sandboxResult(m_sandboxes.kill(*name));
    });
    add(method::SandboxDelete, [this](const RpcContext &, const QJsonObject &params) {
        auto name = nameParam(params);
        if (!name)
            return Result<QJsonValue>(std::unexpected(name.error()));
        return emptyResult(m_sandboxes.remove(*name));
    });
    add(method::ImageList, [this](const RpcContext &, const QJsonObject &) { return imageList(); });
    add(method::ConsoleAttach,
        [this](const RpcContext &c, const QJsonObject &p) { return consoleAttach(c, p); });
    add(method::ConsoleDetach,
        [this](const RpcContext &c, const QJsonObject &p) { return consoleDetach(c, p); });
    add(method::ConsoleWrite,
        [this](const RpcContext &, const QJsonObject &p) { return consoleWrite(p); });
    add(method::EventsSubscribe, [this](const RpcContext &c, const QJsonObject &) {
        m_subscribers.insert(c.clientId);
        return Result<QJsonValue>(QJsonObject());
    });
}

Result<QJsonValue> HelperApi::hello(const RpcContext &context, const QJsonObject &params)
{
    auto version = json::readInteger(params, QStringLiteral("protocol"), INT_MIN, INT_MAX);
    if (!version)
        return std::unexpected(version.error());
    if (*version != protocol::kProtocolVersion)
        return fail(ErrorKind::InvalidRequest,
                    QStringLiteral("protocol version %1 is not supported; this airlockd speaks %2")
                        .arg(*version)
                        .arg(protocol::kProtocolVersion));
    auto client = json::readString(params, QStringLiteral("client"), QString());
    if (!client)
        return std::unexpected(client.error());
    const SandboxServiceConfig &config = m_sandboxes.config();
    return QJsonObject {
        {QStringLiteral("protocol"), protocol::kProtocolVersion},
        {QStringLiteral("helper"), QStringLiteral("airlockd")},
        {QStringLiteral("version"), QStringLiteral(AIRLOCK_VERSION)},
        {QStringLiteral("capabilities"),
         QJsonArray {QStringLiteral("sandbox"), QStringLiteral("console"), QStringLiteral("events"),
                     QStringLiteral("images")}},
        {QStringLiteral("acceleration"), accelerationName(config.acceleration)},
        {QStringLiteral("accelerationWarning"), config.accelerationWarning},
        {QStringLiteral("uid"), qint64(context.peer.uid)},
    };
}

Result<QJsonValue> HelperApi::consoleAttach(const RpcContext &context, const QJsonObject &params)
{
    auto name = nameParam(params);
    if (!name)
        return std::unexpected(name.error());
    if (auto sandbox = m_sandboxes.get(*name); !sandbox)
        return std::unexpected(sandbox.error());
    const ConsoleHub::Replay replay = m_consoles.attach(*name, context.clientId, kMaxReplayBytes);
    return QJsonObject {{QStringLiteral("sandbox"), *name},
                        {QStringLiteral("seq"), qint64(replay.seq)},
                        {QStringLiteral("data"), QString::fromLatin1(replay.data.toBase64())}};
}

Result<QJsonValue> HelperApi::consoleDetach(const RpcContext &context, const QJsonObject &params)
{
    auto name = nameParam(params);
    if (!name)
        return std::unexpected(name.error());
    if (auto sandbox = m_sandboxes.get(*name); !sandbox)
        return std::unexpected(sandbox.error());
    if (!m_consoles.detach(*name, context.clientId))
        return fail(ErrorKind::NotFound,
                    QStringLiteral("this connection is not attached to '%1'").arg(*name));
    return QJsonObject();
}

Result<QJsonValue> HelperApi::consoleWrite(const QJsonObject &params)
{
    auto name = nameParam(params);
    if (!name)
        return std::unexpected(name.error());
    auto data = json::readString(params, QStringLiteral("data"));
    if (!data)
        return std::unexpected(data.error());
    // Bound before decoding: base64 of 64 KiB is at most 87,384 characters.
    if (data->size() > (kMaxConsoleWriteBytes + 2) / 3 * 4)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'data' decodes to more than %1 bytes")
                        .arg(kMaxConsoleWriteBytes));
    const auto decoded = QByteArray::fromBase64Encoding(
        data->toLatin1(), QByteArray::Base64Encoding | QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'data' must be base64"));
    if ((*decoded).size() > kMaxConsoleWriteBytes)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'data' decodes to more than %1 bytes")
                        .arg(kMaxConsoleWriteBytes));
    if (auto ok = m_sandboxes.writeConsole(*name, *decoded); !ok)
        return std::unexpected(ok.error());
    return QJsonObject();
}

Result<QJsonValue> HelperApi::imageList()
{
    QJsonArray images;
    for (const auto &image : m_images.list())
        images.append(image.toJson());
    return QJsonObject {{QStringLiteral("images"), images}};
}

void HelperApi::notifySubscribers(const QByteArray &frame)
{
    // Copy: a send may drop a client, and its disconnect handler edits the set.
    const QSet<quint64> subscribers = m_subscribers;
    for (quint64 client : subscribers)
        m_server.send(client, frame);
}

} // namespace airlock
