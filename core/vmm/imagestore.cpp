#include "core/vmm/imagestore.h"

#include "core/model/names.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcImages, "airlock.vmm.images")

constexpr qint64 kMaxMetadataBytes = 64 * 1024;

/// A file name from image.json: one path component, nothing that climbs out of the directory.
bool isPlainFileName(const QString &name)
{
    return !name.isEmpty() && !name.contains(u'/') && !name.contains(u'\0')
        && name != QLatin1String(".") && name != QLatin1String("..");
}
/// image.json's `vmms`: a non-empty array of known VMM names, each once. Firecracker reads raw
/// disks only, so an image whose root disk is qcow2 cannot name it.
Result<QList<VmmKind>> readVmms(const QString &id, const QJsonValue &value, const GuestImage &image)
{
    if (value.isUndefined() || value.isNull())
        return QList<VmmKind> {VmmKind::Qemu};
    const auto broken = [&id](const QString &why) {
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1': vmms %2").arg(id, why));
    };
    if (!value.isArray() || value.toArray().isEmpty())
        return broken(QStringLiteral("must be a non-empty array of VMM names"));
    QList<VmmKind> kinds;
    for (const QJsonValue &entry : value.toArray()) {
        const auto kind = vmmKindFromName(entry.toString());
        if (!entry.isString() || !kind)
            return broken(QStringLiteral("names an unknown VMM (known: qemu, firecracker)"));
        if (kinds.contains(*kind))
            return broken(QStringLiteral("names %1 twice").arg(entry.toString()));
        kinds.append(*kind);
    }
    if (kinds.contains(VmmKind::Firecracker) && !image.diskPath.isEmpty())
        return broken(QStringLiteral("names firecracker, which cannot read the qcow2 root disk"));
    return kinds;
}
} // namespace

QJsonObject GuestImage::toJson() const
{
    return {
        {QStringLiteral("id"), id},
        {QStringLiteral("description"), description},
        {QStringLiteral("kernel"), QFileInfo(kernelPath).fileName()},
        {QStringLiteral("disk"),
         diskPath.isEmpty() ? QJsonValue(QJsonValue::Null)
                            : QJsonValue(QFileInfo(diskPath).fileName())},
        {QStringLiteral("vmms"),
         [this] {
             QJsonArray names;
             for (const VmmKind kind : vmms)
                 names.append(vmmKindName(kind));
             return names;
         }()},
        {QStringLiteral("createdAt"),
         createdAt.isValid() ? QJsonValue(createdAt.toUTC().toString(Qt::ISODateWithMs))
                             : QJsonValue(QJsonValue::Null)},
    };
}

QString GuestImage::diskIdentity() const
{
    if (diskPath.isEmpty())
        return {};
    return QStringLiteral("%1 %2 %3")
        .arg(id, createdAt.isValid() ? createdAt.toString(Qt::ISODateWithMs) : QStringLiteral("-"))
        .arg(QFileInfo(diskPath).size());
}

ImageStore::ImageStore(QString rootDir) : m_rootDir(std::move(rootDir)) { }

QList<GuestImage> ImageStore::list() const
{
    QList<GuestImage> images;
    const QStringList entries =
        QDir(m_rootDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    for (const QString &entry : entries) {
        if (!validateName(entry))
            continue; // not an image directory (e.g. the build script's .cache)
        auto image = find(entry);
        if (!image) {
            qCWarning(lcImages).noquote()
                << "skipping image" << entry << ":" << image.error().message;
            continue;
        }
        images.append(*image);
    }
    return images;
}

Result<GuestImage> ImageStore::find(const QString &id) const
{
    AIRLOCK_TRY(validateName(id, u"image id"));
    const QDir dir(QDir(m_rootDir).filePath(id));
    QFile metadata(dir.filePath(QStringLiteral("image.json")));
    if (!metadata.exists())
        return fail(ErrorKind::NotFound, QStringLiteral("no image '%1'").arg(id));
    if (!metadata.open(QIODevice::ReadOnly))
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1': cannot read image.json: %2")
                        .arg(id, metadata.errorString()));
    if (metadata.size() > kMaxMetadataBytes)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1': image.json is too large").arg(id));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(metadata.readAll(), &parseError);
    if (!document.isObject())
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1': image.json is not a JSON object: %2")
                        .arg(id, parseError.errorString()));
    const QJsonObject object = document.object();

    GuestImage image;
    image.id = id;
    image.description = object.value(QStringLiteral("description")).toString();
    image.kernelArgs = object.value(QStringLiteral("kernelArgs")).toString();
    image.kernelVersion = object.value(QStringLiteral("kernelVersion")).toString();
    image.createdAt = QDateTime::fromString(object.value(QStringLiteral("createdAt")).toString(),
                                            Qt::ISODateWithMs)
                          .toUTC();
    const QString kernel = object.value(QStringLiteral("kernel")).toString();
    const QString initrd = object.value(QStringLiteral("initrd")).toString();
    const QJsonValue diskValue = object.value(QStringLiteral("disk"));
    if (!diskValue.isUndefined() && !diskValue.isNull() && !diskValue.isString())
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1': disk must be a file name").arg(id));
    const QString disk = diskValue.toString();
    QStringList files {kernel, initrd};
    if (!diskValue.isNull() && !diskValue.isUndefined())
        files.append(disk);
    for (const QString &file : std::as_const(files)) {
        if (!isPlainFileName(file))
            return fail(ErrorKind::BackendUnavailable,
                        QStringLiteral("image '%1': kernel, initrd and disk must be file names "
                                       "inside the image directory (got '%2')")
                            .arg(id, file));
        if (!QFileInfo(dir.filePath(file)).isFile())
            return fail(ErrorKind::BackendUnavailable,
                        QStringLiteral("image '%1': %2 is missing").arg(id, file));
    }
    image.kernelPath = dir.absoluteFilePath(kernel);
    image.initrdPath = dir.absoluteFilePath(initrd);
    if (files.size() > 2) {
        // The disk is opened as qcow2 (never probed): a raw file here would be misread.
        QFile diskFile(dir.filePath(disk));
        if (!diskFile.open(QIODevice::ReadOnly) || diskFile.read(4) != QByteArray("QFI\xfb", 4))
            return fail(ErrorKind::BackendUnavailable,
                        QStringLiteral("image '%1': %2 is not a qcow2 image").arg(id, disk));
        image.diskPath = dir.absoluteFilePath(disk);
    }
    AIRLOCK_TRY_INIT(vmms, readVmms(id, object.value(QStringLiteral("vmms")), image));
    image.vmms = std::move(*vmms);
    return image;
}

} // namespace airlock
